import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED } from '../outbox/events.js';

export type RecordResult = 'recorded' | 'already-recorded' | 'not-visible';

/**
 * Marks the consumer done and writes the history entry in ONE statement, hence one transaction (joins the
 * caller's transaction when there is one). The marker update takes the event's row lock and only matches while
 * `history_done_at` is null, so a concurrent duplicate waits, re-checks and does nothing; the unique
 * outbox_event_id makes the insert a no-op even if it ran twice. Run it any number of times, from any number of
 * workers: one entry.
 */
const RECORD_SQL = `
with ev as (
  update outbox_event set history_done_at = now()
   where id = ? and history_done_at is null
  returning id, type, payload, created_at
), ins as (
  insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
    quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp", correlation_id)
  select ev.id, (ev.payload->>'itemId')::uuid, ev.payload->>'itemName', (ev.payload->>'supplierId')::uuid,
    ev.payload->>'supplierName', (ev.payload->>'change')::integer, (ev.payload->>'quantityBefore')::integer,
    (ev.payload->>'quantityAfter')::integer, ev.payload->>'reason', (ev.payload->>'priceAtChange')::numeric,
    ev.payload->>'createdBy', coalesce((ev.payload->>'occurredAt')::timestamptz, ev.created_at),
    ev.payload->>'correlationId'
  from ev where ev.type = '${STOCK_CHANGED}'
  on conflict (outbox_event_id) do nothing
)
select (select count(*) from ev)::integer as marked,
       exists (select 1 from outbox_event where id = ?) as found`;

/**
 * Consumer side of a `stock.changed` outbox event. 'not-visible' means the event does not exist (yet): the
 * caller retries; the sweeper re-enqueues it anyway while its marker is null.
 */
export async function recordStockChange(em: EntityManager, eventId: string): Promise<RecordResult> {
  const [row] = await em.execute<{ marked: number; found: boolean }[]>(RECORD_SQL, [eventId, eventId]);
  if (Number(row.marked) > 0) return 'recorded';
  return row.found ? 'already-recorded' : 'not-visible';
}
