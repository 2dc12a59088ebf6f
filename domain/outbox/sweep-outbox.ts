import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueueProducer } from '../queues/queue-producer.js';
import { doorbellOptions, type OutboxConsumer } from './consumers.js';
import { byKey } from '../shared/sql.js';

/**
 * One sweep for one consumer: if any event older than `graceMs` still has no marker (never "ids above the last
 * one seen": ids are not in commit order), ring the consumer's doorbell. Younger events are left to the fast
 * path. A lost wake-up call (Redis restarted empty, a ring that timed out, a job that failed) is therefore
 * made good within one sweep interval. Returns whether it rang.
 */
export async function sweepOutbox(
  em: EntityManager,
  queues: QueueProducer,
  consumer: OutboxConsumer,
  options: { graceMs?: number; enqueueTimeoutMs?: number } = {},
): Promise<boolean> {
  const [row] = await em.execute<{ pending: boolean }[]>(
    `select exists (select 1 from outbox_pending x
                     cross join lateral ${byKey('select 1 from outbox_event e where e.id = x.id and e.created_at < now() - make_interval(secs => ?)')} e
                     where x.consumer = ${consumer.code} and x.done_at is null) as pending`,
    [(options.graceMs ?? 0) / 1000],
  );
  if (!row.pending) return false;
  await queues.add(
    consumer.queue,
    consumer.jobName,
    {},
    doorbellOptions(consumer),
    options.enqueueTimeoutMs ?? 3000,
  );
  return true;
}
