import type { QueueProducer } from '../queues/queue-producer.js';
import { NotFoundError } from '../shared/errors.js';

export interface RebuildStatus {
  jobId: string;
  state: string;
  progress: number;
  startedAt: string | null;
  finishedAt: string | null;
  result: Record<string, unknown> | null;
}

const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);

/** The state of a rebuild job as BullMQ reports it (404 when unknown or already removed). */
export async function getRebuildStatus(queues: QueueProducer, jobId: string): Promise<RebuildStatus> {
  const job = jobId.startsWith('rebuild-') ? await queues.queue('reports').getJob(jobId) : undefined;
  if (!job) throw new NotFoundError('analytics.rebuild.not.found');
  const state = await job.getState();
  const result =
    state === 'failed'
      ? { error: job.failedReason ?? 'failed' }
      : job.returnvalue && typeof job.returnvalue === 'object'
        ? (job.returnvalue as Record<string, unknown>)
        : null;
  return {
    jobId,
    state,
    progress: typeof job.progress === 'number' ? job.progress : 0,
    startedAt: iso(job.processedOn),
    finishedAt: iso(job.finishedOn),
    result,
  };
}
