import type { EntityManager } from '@mikro-orm/postgresql';
import { outboxInsertSql } from './outbox-insert.js';

const RECORD_EVENTS_SQL = `with ${outboxInsertSql('e', {
  type: '?',
  aggregateId: "x.value ->> 'aggregateId'",
  payload: "x.value -> 'payload'",
  from: 'from jsonb_array_elements(?::jsonb) with ordinality as x(value, n) order by x.n',
})}
select count(*) from e`;

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
  await em.execute(RECORD_EVENTS_SQL, [type, JSON.stringify(events)]);
}
