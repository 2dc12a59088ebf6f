import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueueProducer } from '../queues/queue-producer.js';
import { CONSUMER_JOB_OPTIONS, outboxJobId, type OutboxConsumer } from './consumers.js';

export const SWEEP_BATCH = 500;

/**
 * One sweep for one consumer: every event whose marker is still null (never "ids above the last one seen":
 * ids are not in commit order) is (re-)enqueued under its deterministic job id. `FOR UPDATE SKIP LOCKED`
 * spreads the rows over concurrent sweepers; job ids de-duplicate what is already queued. Events younger than
 * `graceMs` are left to the fast path. Returns how many events were enqueued.
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
    const found = await em.fork().transactional(async tx => {
      const rows = await tx.execute<{ id: string }[]>(
        `select id::text as id from outbox_event
          where ${consumer.marker} is null and id > ? and created_at < now() - make_interval(secs => ?)
          order by id limit ? for update skip locked`,
        [after, (options.graceMs ?? 0) / 1000, batch],
      );
      if (rows.length > 0)
        await queues.addBulk(
          consumer.queue,
          rows.map(row => ({
            name: consumer.jobName,
            data: { eventId: row.id },
            opts: { ...CONSUMER_JOB_OPTIONS, jobId: outboxJobId(row.id) },
          })),
          options.enqueueTimeoutMs ?? 3000,
        );
      return rows.map(r => r.id);
    });
    total += found.length;
    if (found.length < batch) return total;
    after = found[found.length - 1];
  }
}
