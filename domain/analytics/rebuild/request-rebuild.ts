import { randomBytes } from 'node:crypto';
import type { QueueProducer } from '../../queues/queue-producer.js';

/**
 * Enqueues a rollup rebuild, single-flight: while a rebuild is waiting or running, its job id is returned
 * instead of a new one (and the rebuild's exclusive advisory lock serializes any that slip through).
 */
export async function requestRebuild(queues: QueueProducer, requestedBy: string): Promise<string> {
  const queue = queues.queue('reports');
  const existing = await queue.getJobs(['active', 'waiting', 'delayed', 'prioritized'], 0, 0, true);
  if (existing[0]?.id) return existing[0].id;
  const jobId = `rebuild-${Date.now()}-${randomBytes(3).toString('hex')}`;
  return queues.add(
    'reports',
    'rebuild',
    { requestedBy },
    { jobId, attempts: 3, backoff: { type: 'exponential', delay: 1000 } },
  );
}
