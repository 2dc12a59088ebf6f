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
import { integrity } from './integrity.worker.js';
import { replenishment } from './replenishment.worker.js';

/**
 * Doorbell jobs of one outbox consumer that one worker process runs at once: one. A ring during a run queues
 * one follow-up job, which then finds everything committed meanwhile; a second job slot started that follow-up
 * beside the run still looping, and the two split the trickle into smaller batches (more statements per event).
 * With one slot the consumers spent less PostgreSQL time per event and their lag tail was no worse; more worker
 * processes take more partitions (docs/performance.md).
 */
const CONSUMER_CONCURRENCY = 1;

/** Which processor handles which queue. */
export const PROCESSORS: Record<QueueName, Processor> = {
  housekeeping,
  'stock-history': stockHistory,
  analytics,
  'low-stock-alerts': lowStockAlerts,
  webhooks,
  reports,
  imports,
  integrity,
  replenishment,
};

/**
 * Per-queue worker options: a rebuild is heavy, one at a time per process. An outbox consumer's job drains
 * every partition it can lock; the three consumers run side by side, and more processes take more partitions.
 */
const WORKER_OPTIONS: Partial<Record<QueueName, { concurrency: number }>> = {
  reports: { concurrency: 1 },
  'stock-history': { concurrency: CONSUMER_CONCURRENCY },
  analytics: { concurrency: CONSUMER_CONCURRENCY },
  'low-stock-alerts': { concurrency: CONSUMER_CONCURRENCY },
  // An import holds a connection and its temporary tables for its run: one at a time per process.
  imports: { concurrency: 1 },
  // A check reads the whole history in one snapshot: one at a time per process.
  integrity: { concurrency: 1 },
  // A run replaces every item's stored computation in one transaction: one at a time per process.
  replenishment: { concurrency: 1 },
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
  const connection = createRedis(services.config, 'worker');
  const stopping = new AbortController();
  const workers = (Object.entries(PROCESSORS) as [QueueName, Processor][]).map(([queue, processor]) =>
    startWorker(services, connection, queue, processor, WORKER_OPTIONS[queue], stopping.signal),
  );
  const relay = options.relay === false ? undefined : startOutboxRelay(services);
  const clock = options.clock === false ? undefined : startClock(services);
  return {
    workers,
    close: async () => {
      // A drain in flight ends after its current batch commits; what is left stays pending in the outbox.
      stopping.abort();
      await clock?.stop();
      await relay?.stop();
      // close() waits for the jobs in flight, so nothing is left for stall detection; a job that has not
      // started stays waiting in its queue for the next worker.
      await Promise.all(workers.map(worker => worker.close()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
