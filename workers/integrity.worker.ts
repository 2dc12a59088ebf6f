import type { Processor } from './start-worker.js';
import { checkIntegrity } from '../domain/stock-history/check-integrity.js';

/** The integrity check (admin-triggered or daily), reporting BullMQ job progress (0-100). Never repairs. */
export const integrity: Processor = async (job, em) =>
  checkIntegrity(em, async percent => {
    await job.updateProgress(percent);
  });
