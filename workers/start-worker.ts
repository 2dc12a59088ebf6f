import { Worker, type Job, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../config/services.js';
import type { QueueName } from '../domain/queues/queue-names.js';

/**
 * A job handler: gets its own EntityManager fork; throws to retry, `UnrecoverableError` to give up. `stopping`
 * aborts when the process shuts down: a handler that loops (an outbox drain) ends after the batch it is in.
 */
export type Processor = (
  job: Job,
  em: EntityManager,
  services: Services,
  stopping: AbortSignal,
) => Promise<unknown>;

/**
 * Creates a BullMQ worker over a shared blocking connection (maxRetriesPerRequest: null, so it rides out
 * Redis outages). One EntityManager fork per job; every failure is logged with the job id.
 */
export function startWorker(
  services: Services,
  connection: Redis,
  queue: QueueName,
  processor: Processor,
  options: Partial<WorkerOptions> = {},
  stopping: AbortSignal = new AbortController().signal,
): Worker {
  const log = services.logger.child({ queue });
  const worker = new Worker(queue, job => processor(job, services.orm.em.fork(), services, stopping), {
    connection,
    prefix: services.config.redisPrefix,
    concurrency: services.config.workerConcurrency,
    lockDuration: services.config.workerLockDurationMs,
    stalledInterval: services.config.workerStalledIntervalMs,
    // BullMQ waits this long before retrying after a connection error (default 15 s): come back quickly
    // once Redis is reachable again.
    runRetryDelay: 500,
    skipVersionCheck: true,
    ...options,
  });
  worker.on('error', error => log.warn({ err: error }, 'worker error'));
  worker.on('failed', (job, error) =>
    log.warn({ jobId: job?.id, attempts: job?.attemptsMade, err: error }, 'job failed'),
  );
  worker.on('stalled', jobId => log.warn({ jobId }, 'job stalled; it will be processed again'));
  return worker;
}
