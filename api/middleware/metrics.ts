import type { Request, Response } from 'express';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { RouteDurationHistogram } from './route-duration-histogram.js';
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
  const duration = new RouteDurationHistogram(
    registry,
    'http_request_duration_seconds',
    'HTTP request duration by method, route and status',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  const observe = (req: Request, res: Response, elapsedMs: number) => {
    if (!res.writableFinished) return;
    const path = (req.route as { path?: string } | undefined)?.path;
    const route = path ? `${req.baseUrl}${path}` : 'unmatched';
    const { method } = req;
    const { statusCode } = res;
    duration.observe(
      `${method} ${statusCode} ${route}`,
      () => ({ method, route, status_code: statusCode }),
      elapsedMs / 1000,
    );
  };
  return { registry, observe, countRead: target => reads.inc({ target }) };
}
