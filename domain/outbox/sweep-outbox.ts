import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueueProducer } from '../queues/queue-producer.js';
import { CONSUMER_JOB_OPTIONS, outboxJobId, type OutboxConsumer } from './consumers.js';

export const SWEEP_BATCH = 500;

/**
 * One sweep for one consumer: every event whose marker is still null (never "ids above the last one seen"
 * across sweeps: ids are not in commit order) is (re-)enqueued under its deterministic job id.
 * `SKIP LOCKED` leaves out the events a worker is recording right now (it holds their row lock); the claim is
 * released before talking to Redis, so a sweep never blocks a worker. Concurrent sweepers may enqueue the same
 * event: the job id de-duplicates it. Events younger than `graceMs` are left to the fast path. Returns how many
 * events were enqueued.
 */
export async function sweepOutbox(
  em: EntityManager,
  queues: QueueProducer,
  consumer: OutboxConsumer,
  options: { graceMs?: number; batch?: number; enqueueTimeoutMs?: number } = {},
): Promise<number> {
  const batch = options.batch ?? SWEEP_BATCH;
  let total = 0;
  let after = '0';
  for (;;) {
    const ids = await em.fork().transactional(async tx => {
      const rows = await tx.execute<{ id: string }[]>(
        `select id::text as id from outbox_event
          where ${consumer.marker} is null and id > ? and created_at < now() - make_interval(secs => ?)
          order by id limit ? for update skip locked`,
        [after, (options.graceMs ?? 0) / 1000, batch],
      );
      return rows.map(row => row.id);
    });
    if (ids.length > 0)
      await queues.addBulk(
        consumer.queue,
        ids.map(id => ({
          name: consumer.jobName,
          data: { eventId: id },
          opts: { ...CONSUMER_JOB_OPTIONS, jobId: outboxJobId(id) },
        })),
        options.enqueueTimeoutMs ?? 3000,
      );
    total += ids.length;
    if (ids.length < batch) return total;
    after = ids[ids.length - 1];
  }
}
