import { QueueEvents, type Job } from 'bullmq';
import type { Services } from '../../config/services.js';
import { createRedis } from '../../config/redis.js';
import type { QueueName } from '../../domain/queues/queue-names.js';

/**
 * Adds a job with the id `jobId` to `queue` and waits until a running worker has finished it (BullMQ's queue
 * events, no polling); answers the job and its result. The caller starts and stops the workers.
 */
export async function runJob(
  services: Services,
  queue: QueueName,
  name: string,
  jobId: string,
  timeoutMs: number,
): Promise<{ job: Job; result: unknown }> {
  const connection = createRedis(services.config, 'worker');
  const events = new QueueEvents(queue, { connection, prefix: services.config.redisPrefix });
  try {
    await events.waitUntilReady();
    const id = await services.queues.add(queue, name, {}, { jobId });
    const job = await services.queues.queue(queue).getJob(id);
    if (!job) throw new Error(`job ${id} of ${queue} not found after adding it`);
    return { job, result: await job.waitUntilFinished(events, timeoutMs) };
  } finally {
    await events.close();
    await connection.quit().catch(() => connection.disconnect());
  }
}
