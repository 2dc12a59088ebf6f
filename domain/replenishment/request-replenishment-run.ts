import { randomBytes } from 'node:crypto';
import type { QueueProducer } from '../queues/queue-producer.js';
import { enqueueSingleFlight } from '../queues/enqueue-single-flight.js';

/** Job ids of replenishment runs start with this (the replenishment run's status route answers 404 for any other id). */
export const RUN_JOB_PREFIX = 'replenishment-';

/**
 * Enqueues a replenishment run, single-flight: while one is waiting or running, its job id is returned instead
 * (and the run's advisory lock serializes any that slip through). `jobId` names the run (the clock's and the
 * rebuild's are deterministic, so a repeat adds nothing).
 */
export const requestReplenishmentRun = (
  queues: QueueProducer,
  requestedBy: string,
  jobId = `${RUN_JOB_PREFIX}${Date.now()}-${randomBytes(3).toString('hex')}`,
): Promise<string> =>
  enqueueSingleFlight(
    queues,
    'replenishment',
    'run',
    { requestedBy },
    { jobId, attempts: 3, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: { count: 50 } },
  );
