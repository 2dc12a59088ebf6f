import type { Worker } from 'bullmq';
import type { Services } from '../config/services.js';
import { createRedis } from '../config/redis.js';
import type { QueueName } from '../domain/queues/queue-names.js';
import { startWorker, type Processor } from './start-worker.js';
import { startClock } from './clock.js';
import { housekeeping } from './housekeeping.worker.js';
import { stockHistory } from './stock-history.worker.js';
import { startOutboxRelay } from './outbox-relay.js';
import { analytics } from './analytics.worker.js';
import { lowStockAlerts } from './low-stock-alerts.worker.js';
import { webhooks } from './webhooks.worker.js';
import { reports } from './report-rebuild.worker.js';
import { imports } from './imports.worker.js';

/**
 * Doorbell jobs of one outbox consumer that one worker process runs at once. One for the stock history and the
 * alerts: a ring during a run queues one follow-up job, which then finds everything committed meanwhile; a second
 * job slot started that follow-up beside the run still looping, and the two split a trickle into smaller batches.
 * Alerts with one slot against two, paced lag at 1,380 writes/s in 7 alternating rounds of two A/B runs: p99
 * lower in 6 of them (30-55 against 32-53 ms), and the consumers' PostgreSQL time per event 372-401 against
 * 428-498 µs (both consumers at one slot). Two for the analytics fold, the costliest per event: its p99 was no
 * better with one (lower in 4 of the 7 rounds, 43-115 against 41-61 ms), and with one it drained a backlog at
 * 5.4-5.6x the max write rate (medians of 4 bench runs) against 5.8-6.5x (3 runs).
 */
const CONSUMER_CONCURRENCY = 1;
const ANALYTICS_CONCURRENCY = 2;

/** Which processor handles which queue. */
export const PROCESSORS: Record<QueueName, Processor> = {
  housekeeping,
  'stock-history': stockHistory,
  analytics,
  'low-stock-alerts': lowStockAlerts,
  webhooks,
  reports,
  imports,
};

/**
 * Per-queue worker options: a rebuild is heavy, one at a time per process. An outbox consumer's job drains
 * every partition it can lock; the three consumers run side by side, and more processes take more partitions.
 */
const WORKER_OPTIONS: Partial<Record<QueueName, { concurrency: number }>> = {
  reports: { concurrency: 1 },
  'stock-history': { concurrency: CONSUMER_CONCURRENCY },
  analytics: { concurrency: ANALYTICS_CONCURRENCY },
  'low-stock-alerts': { concurrency: CONSUMER_CONCURRENCY },
  // An import is one long transaction holding its rows' locks: one at a time per process.
  imports: { concurrency: 1 },
};

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

/**
 * Starts a worker for every queue, the outbox sweeper and the clock. Any number of worker processes may run:
 * BullMQ gives each job to one of them, jobs are idempotent and the sweeper uses SKIP LOCKED.
 */
export function startWorkers(
  services: Services,
  options: { clock?: boolean; relay?: boolean } = {},
): RunningWorkers {
  const connection = createRedis(services.config.redisUrl, 'worker');
  const workers = (Object.entries(PROCESSORS) as [QueueName, Processor][]).map(([queue, processor]) =>
    startWorker(services, connection, queue, processor, WORKER_OPTIONS[queue]),
  );
  const relay = options.relay === false ? undefined : startOutboxRelay(services);
  const clock = options.clock === false ? undefined : startClock(services);
  return {
    workers,
    close: async () => {
      await clock?.stop();
      await relay?.stop();
      // close() waits for the jobs in flight, so nothing is left for stall detection.
      await Promise.all(workers.map(worker => worker.close()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
