import type { Services } from '../config/services.js';

/** Every 2 s: re-enqueue pending analytics and low-stock consumers (a BullMQ job scheduler: one per queue). */
export const CONSUMER_SWEEP_EVERY_MS = 2000;

/**
 * Upserts the BullMQ job schedulers of the worker process. Job schedulers are stored in Redis under a fixed
 * id, so any number of worker processes share one schedule. Best effort: Redis being away only delays it.
 */
export function ensureJobSchedulers(services: Services): void {
  services.queues
    .queue('analytics')
    .upsertJobScheduler(
      'consumer-sweep',
      { every: CONSUMER_SWEEP_EVERY_MS },
      { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: 100 } },
    )
    .catch(error => services.logger.warn({ err: error }, 'could not upsert the consumer sweep scheduler'));
}
