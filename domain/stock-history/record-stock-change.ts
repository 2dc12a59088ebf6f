import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED } from '../outbox/events.js';

export type RecordResult = 'recorded' | 'already-recorded' | 'not-visible';

/**
 * Consumer side of a `stock.changed` outbox event. In ONE transaction: the history entry (a no-op when it
 * already exists: unique outbox_event_id) and the consumer's marker `history_done_at`. Run it any number of
 * times, from any number of workers: the result is one entry. 'not-visible' means the event does not exist
 * (yet): the caller retries; the sweeper re-enqueues it anyway while its marker is null.
 */
export async function recordStockChange(em: EntityManager, eventId: string): Promise<RecordResult> {
  return em.transactional(async tx => {
    const events = await tx.execute<{ type: string; done: boolean }[]>(
      'select type, history_done_at is not null as done from outbox_event where id = ? for update',
      [eventId],
    );
    if (events.length === 0) return 'not-visible';
    if (events[0].done) return 'already-recorded';
    if (events[0].type === STOCK_CHANGED)
      await tx.execute(
        `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
           quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp", correlation_id)
         select e.id, (e.payload->>'itemId')::uuid, e.payload->>'itemName', (e.payload->>'supplierId')::uuid,
           e.payload->>'supplierName', (e.payload->>'change')::integer, (e.payload->>'quantityBefore')::integer,
           (e.payload->>'quantityAfter')::integer, e.payload->>'reason', (e.payload->>'priceAtChange')::numeric,
           e.payload->>'createdBy', coalesce((e.payload->>'occurredAt')::timestamptz, e.created_at),
           e.payload->>'correlationId'
         from outbox_event e where e.id = ?
         on conflict (outbox_event_id) do nothing`,
        [eventId],
      );
    await tx.execute('update outbox_event set history_done_at = now() where id = ?', [eventId]);
    return 'recorded';
  });
}
