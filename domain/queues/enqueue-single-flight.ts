import type { JobsOptions } from 'bullmq';
import type { QueueProducer } from './queue-producer.js';
import type { QueueName } from './queue-names.js';

/**
 * Adds a job to `queue` unless one is already waiting or running there: then that job's id is answered instead
 * (admin jobs that must not pile up; a job that slips through a race is serialized by its own lock).
 */
export async function enqueueSingleFlight(
  queues: QueueProducer,
  queue: QueueName,
  jobName: string,
  data: object,
  options: JobsOptions & { jobId: string },
): Promise<string> {
  const existing = await queues
    .queue(queue)
    .getJobs(['active', 'waiting', 'delayed', 'prioritized'], 0, 0, true);
  if (existing[0]?.id) return existing[0].id;
  return queues.add(queue, jobName, data, options);
}
