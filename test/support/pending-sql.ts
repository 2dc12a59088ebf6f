import { OUTBOX_CONSUMERS, type OutboxConsumer } from '../../domain/outbox/consumers.js';

/** SQL condition: the outbox event `alias` is still pending for any of `consumers` (all three by default). */
export const pendingFor = (consumers: OutboxConsumer[] = OUTBOX_CONSUMERS, alias = 'o'): string =>
  `exists (select 1 from outbox_pending x where x.id = ${alias}.id and x.done_at is null
             and x.consumer in (${consumers.map(c => c.code).join(', ')}))`;

/** SQL statement: marks the events whose ids `where` selects (a condition on `outbox_pending x`) done for `consumers`. */
export const markDoneSql = (consumers: OutboxConsumer[], where: string): string =>
  `update outbox_pending x set done_at = now()
    where x.done_at is null and x.consumer in (${consumers.map(c => c.code).join(', ')}) and ${where}`;
