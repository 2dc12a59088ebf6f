import type { Processor } from './start-worker.js';
import { foldStockEvent } from '../domain/analytics/fold-stock-event.js';
import { takeDailySnapshot } from '../domain/analytics/take-daily-snapshot.js';
import { sweepStockEventConsumers } from './consumer-sweeper.js';

/**
 * The analytics queue: `fold` (one outbox event into the rollups), `sweep` (re-enqueue pending analytics and
 * low-stock consumers; a BullMQ job scheduler every 2 s) and `snapshot` (nightly closing snapshot).
 */
export const analytics: Processor = async (job, em, services) => {
  if (job.name === 'sweep') return sweepStockEventConsumers(em, services);
  if (job.name === 'snapshot') return takeDailySnapshot(em, String(job.data.at ?? new Date().toISOString()));
  return foldStockEvent(em, String(job.data.eventId));
};
