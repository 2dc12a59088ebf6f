import type { Processor } from './start-worker.js';
import { computeReplenishment } from '../domain/replenishment/compute-replenishment.js';

/** The replenishment run (the replenishment run, the clock, after a report rebuild), reporting BullMQ job progress (0-100). */
export const replenishment: Processor = async (job, em, services) =>
  computeReplenishment(em, services.config.replenishment, async percent => {
    await job.updateProgress(percent);
  });
