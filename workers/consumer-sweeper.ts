import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../config/services.js';
import { claimPendingEvents } from '../domain/outbox/pending-events.js';
import { CONSUMER_JOB_OPTIONS } from '../domain/queues/stock-event-jobs.js';

const BATCH = 500;
/** Leave the fast path a moment before sweeping a fresh event. */
const MIN_AGE_MS = 1000;

/**
 * Re-enqueues outbox events whose analytics or low-stock marker is still null (SKIP LOCKED, so several
 * sweepers never pick the same rows). The job id carries the minute, so an event whose earlier job is kept
 * as failed is still retried, at most once a minute. Repeats are harmless: the consumers are idempotent.
 */
export async function sweepStockEventConsumers(em: EntityManager, services: Services) {
  const minute = Math.floor(Date.now() / 60000);
  const swept = { analytics: 0, alerts: 0 };
  await em.transactional(async tx => {
    for (const id of await claimPendingEvents(tx, 'analytics', BATCH, MIN_AGE_MS)) {
      if (
        await services.queues.addQuietly(
          'analytics',
          'fold',
          { eventId: id },
          { jobId: `outbox-${id}-s${minute}`, ...CONSUMER_JOB_OPTIONS },
        )
      )
        swept.analytics += 1;
    }
    for (const id of await claimPendingEvents(tx, 'alerts', BATCH, MIN_AGE_MS)) {
      if (
        await services.queues.addQuietly(
          'low-stock-alerts',
          'evaluate',
          { eventId: id },
          { jobId: `outbox-${id}-s${minute}`, ...CONSUMER_JOB_OPTIONS },
        )
      )
        swept.alerts += 1;
    }
  });
  return swept;
}
