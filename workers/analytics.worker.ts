import type { Processor } from './start-worker.js';
import { drainOnDoorbell } from './drain-on-doorbell.js';
import { ANALYTICS_CONSUMER } from '../domain/outbox/consumers.js';
import { foldPendingEvents } from '../domain/analytics/fold/fold-pending-events.js';
import { takeDailySnapshot } from '../domain/analytics/fold/take-daily-snapshot.js';

/**
 * The analytics queue: the doorbell (`fold`: every pending event into the rollups, in batches per partition)
 * and `snapshot` (nightly closing snapshot).
 */
export const analytics: Processor = (job, em, services, stopping) =>
  job.name === 'snapshot'
    ? takeDailySnapshot(em, String(job.data.at ?? new Date().toISOString()))
    : drainOnDoorbell(job, em, services, ANALYTICS_CONSUMER, foldPendingEvents, {
        rebuildShared: true,
        stopping,
      });
