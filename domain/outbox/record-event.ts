import type { EntityManager } from '@mikro-orm/postgresql';
import { pendingRowsInsert } from './consumers.js';

/**
 * Inserts an outbox row inside the caller's transaction (`em.execute` joins the EntityManager's transaction), so the
 * state change and its event commit together or not at all. Returns the event id.
 */
export async function recordEvent(
  em: EntityManager,
  type: string,
  aggregateId: string,
  payload: object,
): Promise<string> {
  const rows = await em.execute<{ id: string }[]>(
    `with e as (insert into outbox_event (type, aggregate_id, payload) values (?, ?, ?::jsonb) returning id, part),
     p as (${pendingRowsInsert('e')})
     select id from e`,
    [type, aggregateId, JSON.stringify(payload)],
  );
  return String(rows[0].id);
}
