import { WaitingError } from 'bullmq';
import type { Processor } from './start-worker.js';
import { HandedBack, markImportFailed, runImport } from '../domain/imports/run-import.js';
import { requeueImports } from '../domain/imports/requeue-imports.js';

/** An import with no progress for this long is enqueued again by the sweep. */
const IMPORT_IDLE_MS = 60_000;

/**
 * `import` runs one CSV import (progress 0-100 on the job); `sweep` (every minute, from the clock) re-enqueues
 * imports that lost their job. The last failed attempt marks the import failed. At shutdown (`stopping`) an
 * import stops where it is (an apply in progress rolls back whole) and its job goes back to the queue at once,
 * for another worker or the next start.
 */
export const imports: Processor = async (job, em, services, stopping) => {
  if (job.name === 'sweep') return requeueImports(em, services.queues, IMPORT_IDLE_MS);
  const id = String((job.data as { importId: string }).importId);
  try {
    const report = await runImport(em, services.queues, id, {
      isKey: key => services.i18n.exists(key),
      signal: stopping,
      onProgress: async (read, total) =>
        job.updateProgress(total > 0 ? Math.min(100, Math.floor((read / total) * 100)) : 100),
    });
    return report
      ? { created: report.created, updated: report.updated, rejected: report.rejectedCount }
      : null;
  } catch (error) {
    if (error instanceof HandedBack) {
      // Back to waiting without spending an attempt (WaitingError tells BullMQ the job was moved).
      await job.moveToWait(job.token);
      throw new WaitingError();
    }
    if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
      await markImportFailed(em.fork(), id, error instanceof Error ? error.message : String(error));
    throw error;
  }
};
