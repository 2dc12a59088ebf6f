import type { EntityManager } from '@mikro-orm/postgresql';
import { pendingRowsInsert } from './consumers.js';

/**
 * Inserts many outbox rows of one type in ONE statement inside the caller's transaction (the bulk form of
 * `recordEvent`, for batch operations). Rows are inserted in the given order, so ids follow it.
 */
export async function recordEvents(
  em: EntityManager,
  type: string,
  events: readonly { aggregateId: string; payload: object }[],
): Promise<void> {
  if (events.length === 0) return;
  await em.execute(
    `with e as (
       insert into outbox_event (type, aggregate_id, payload)
       select ?, e.value ->> 'aggregateId', e.value -> 'payload'
       from jsonb_array_elements(?::jsonb) with ordinality as e(value, n)
       order by e.n
       returning id, part)
     ${pendingRowsInsert('e')}`,
    [type, JSON.stringify(events)],
  );
}
