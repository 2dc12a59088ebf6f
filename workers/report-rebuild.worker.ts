import type { Processor } from './start-worker.js';
import { rebuildRollups } from '../domain/analytics/rebuild/rebuild-rollups.js';
import {
  requestReplenishmentRun,
  RUN_JOB_PREFIX,
} from '../domain/replenishment/request-replenishment-run.js';

/**
 * Rebuilds every analytics rollup from the history, reporting BullMQ job progress (0-100); then asks for a
 * replenishment run, whose demand comes from the rebuilt rollups (a deterministic id per rebuild, so a retried
 * rebuild asks once; a failure to ask only delays the suggestions to the next run).
 */
export const reports: Processor = async (job, em, services) => {
  const result = await rebuildRollups(em, async percent => {
    await job.updateProgress(percent);
  });
  await requestReplenishmentRun(services.queues, 'report-rebuild', `${RUN_JOB_PREFIX}after-${job.id}`).catch(
    (error: unknown) =>
      services.logger.warn({ err: error, jobId: job.id }, 'could not ask for a replenishment run'),
  );
  return result;
};
