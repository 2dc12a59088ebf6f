import type { QueueProducer } from '../../queues/queue-producer.js';
import type { QueueName } from '../../queues/queue-names.js';
import { NotFoundError } from '../../shared/errors.js';

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
export const getRebuildStatus = (queues: QueueProducer, jobId: string): Promise<RebuildStatus> =>
  getJobStatus(queues, 'reports', 'rebuild-', jobId, 'analytics.rebuild.not.found');

/** The state of an admin job of `queue` whose ids start with `prefix` (404 `notFoundKey` otherwise). */
export async function getJobStatus(
  queues: QueueProducer,
  queue: QueueName,
  prefix: string,
  jobId: string,
  notFoundKey: string,
): Promise<RebuildStatus> {
  if (!jobId.startsWith(prefix)) throw new NotFoundError(notFoundKey);
  // The state is read before the job's data: a job seen finished is then read with its final progress and
  // result (read the other way round, a job finishing in between showed `completed` with an earlier progress).
  const state = await queues.queue(queue).getJobState(jobId);
  const job = state === 'unknown' ? undefined : await queues.queue(queue).getJob(jobId);
  if (!job) throw new NotFoundError(notFoundKey);
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
