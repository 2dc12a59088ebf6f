import type { Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ResponseObserver } from './on-response-done.js';
import type { ReadReplicas } from '../../config/read-replicas.js';
import type { ReadTarget } from '../routing/replica-reads.js';

/**
 * One Prometheus registry per app: default process metrics plus request duration by route and status.
 * `observe` records a finished response (run by onResponseDone; aborted responses are not counted).
 */
export function createMetrics(replicas?: ReadReplicas): {
  registry: Registry;
  observe: ResponseObserver;
  countRead: (target: ReadTarget) => void;
} {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const reads = new Counter({
    name: 'stockroom_replica_routed_reads_total',
    help: 'Reads of the replica-eligible routes by where they ran: replica, primary, or fallback (primary after the replica failed)',
    labelNames: ['target'] as const,
    registers: [registry],
  });
  if (replicas)
    new Gauge({
      name: 'stockroom_replica_lag_seconds',
      help: 'How far each read replica is behind the primary, by WAL position (as of the last poll)',
      labelNames: ['replica'] as const,
      registers: [registry],
      collect() {
        for (const replica of replicas.replicas)
          this.set({ replica: String(replica.index) }, replica.lagMs() / 1000);
      },
    });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // One labelled child per method, route and status, looked up by a string key (prom-client would hash the
  // label object of every observation).
  const children = new Map<string, { observe(seconds: number): void }>();
  const observe = (req: Request, res: Response, elapsedMs: number) => {
    if (!res.writableFinished) return;
    const path = (req.route as { path?: string } | undefined)?.path;
    const route = path ? `${req.baseUrl}${path}` : 'unmatched';
    const key = `${req.method} ${res.statusCode} ${route}`;
    let child = children.get(key);
    if (!child) {
      child = duration.labels({ method: req.method, route, status_code: res.statusCode });
      children.set(key, child);
    }
    child.observe(elapsedMs / 1000);
  };
  return { registry, observe, countRead: target => reads.inc({ target }) };
}
