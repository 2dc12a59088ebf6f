import type { Processor } from './start-worker.js';
import { foldStockEvent } from '../domain/analytics/fold-stock-event.js';
import { takeDailySnapshot } from '../domain/analytics/take-daily-snapshot.js';

/**
 * The analytics queue: `fold` (one outbox event into the rollups; the outbox relay re-enqueues pending ones)
 * and `snapshot` (nightly closing snapshot).
 */
export const analytics: Processor = async (job, em, services) => {
  if (job.name === 'snapshot') return takeDailySnapshot(em, String(job.data.at ?? new Date().toISOString()));
  return foldStockEvent(em, String(job.data.eventId), {
    onBatchError: error =>
      services.logger.warn(
        { err: error, jobId: job.id },
        'analytics batch fold failed; folding this item alone',
      ),
  });
};
