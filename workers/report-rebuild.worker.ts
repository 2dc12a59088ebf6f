import type { Processor } from './start-worker.js';
import { rebuildRollups } from '../domain/analytics/rebuild-rollups.js';

/** Rebuilds every analytics rollup from the history, reporting BullMQ job progress (0-100). */
export const reports: Processor = async (job, em) =>
  rebuildRollups(em, async percent => {
    await job.updateProgress(percent);
  });
