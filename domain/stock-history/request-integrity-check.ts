import { randomBytes } from 'node:crypto';
import type { QueueProducer } from '../queues/queue-producer.js';
import { enqueueSingleFlight } from '../queues/enqueue-single-flight.js';

/** Enqueues an integrity check, single-flight: while one is waiting or running, its job id is returned. */
export const requestIntegrityCheck = (queues: QueueProducer, requestedBy: string): Promise<string> =>
  enqueueSingleFlight(
    queues,
    'integrity',
    'check',
    { requestedBy },
    { jobId: `integrity-${Date.now()}-${randomBytes(3).toString('hex')}`, removeOnComplete: { count: 50 } },
  );

/** Items with drift found by the latest finished check (the Prometheus gauge), or null before the first. */
export async function latestDriftItems(queues: QueueProducer): Promise<number | null> {
  const [job] = await queues.queue('integrity').getJobs(['completed'], 0, 0, false);
  const drift = (job?.returnvalue as { drift?: { itemId: string }[] } | undefined)?.drift;
  return drift ? new Set(drift.map(d => d.itemId)).size : null;
}
