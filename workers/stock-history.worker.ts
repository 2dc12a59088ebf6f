import type { Processor } from './start-worker.js';
import { drainOnDoorbell } from './drain-on-doorbell.js';
import { STOCK_HISTORY_CONSUMER } from '../domain/outbox/consumers.js';
import { recordStockChanges, recordStockChangesAlone } from '../domain/stock-history/record-stock-changes.js';

/**
 * Doorbell -> every pending event becomes one stock-history entry, in batches per partition, each batch one
 * statement.
 */
export const stockHistory: Processor = (job, em, services, stopping) =>
  drainOnDoorbell(job, em, services, STOCK_HISTORY_CONSUMER, recordStockChanges, {
    oneStatement: recordStockChangesAlone,
    stopping,
  });
