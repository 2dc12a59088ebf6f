import type { EntityManager } from '@mikro-orm/postgresql';
import { outboxInsertSql } from './outbox-insert.js';

const RECORD_EVENT_SQL = `with ${outboxInsertSql('e', { type: '?', aggregateId: '?', payload: '?::jsonb' })}
select id from e`;

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
  const rows = await em.execute<{ id: string }[]>(RECORD_EVENT_SQL, [
    type,
    aggregateId,
    JSON.stringify(payload),
  ]);
  return String(rows[0].id);
}
