import type { Processor } from './start-worker.js';
import { recordStockChange } from '../domain/stock-history/record-stock-change.js';
import type { OutboxJobData } from '../domain/outbox/consumers.js';

/** `outbox-<id>` -> one stock-history entry + the consumer marker, idempotently. */
export const stockHistory: Processor = async (job, em) => {
  const { eventId } = job.data as OutboxJobData;
  const result = await recordStockChange(em, String(eventId));
  // Not committed yet (or never): retry with backoff; the sweeper covers it while its marker is null.
  if (result === 'not-visible') throw new Error(`outbox event ${eventId} is not visible`);
  return result;
};
