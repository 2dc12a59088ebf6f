import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { markDone, pendingEvent, takeItemEvents } from '../outbox/pending-events.js';
import { toUnits } from './decimal.js';
import { foldItemEvents, type FoldEvent } from './fold-item-events.js';
import { lockItem, lockRebuildShared } from './locks.js';
import { writeRollups } from './write-rollups.js';

export const payloadToFoldEvent = (id: string, p: StockChangedPayload): FoldEvent => ({
  eventId: id,
  itemId: p.itemId,
  itemName: p.itemName,
  supplierId: p.supplierId,
  supplierName: p.supplierName,
  day: new Date(p.occurredAt).toISOString().slice(0, 10),
  change: p.change,
  quantityAfter: p.quantityAfter,
  reason: p.reason,
  priceAtChange: p.priceAtChange,
  createdBy: p.createdBy,
});

/**
 * The analytics consumer: folds a `stock.changed` event (and any earlier pending event of the same item, in
 * id order) into the daily rollups and sets `analytics_done_at` in the same transaction. A repeat is a no-op.
 * Returns how many events were folded.
 */
export async function foldStockEvent(em: EntityManager, eventId: string): Promise<number> {
  return em.transactional(async tx => {
    await lockRebuildShared(tx);
    const event = await pendingEvent(tx, 'analytics', eventId);
    if (!event) return 0;
    if (event.type !== STOCK_CHANGED) {
      await markDone(tx, 'analytics', eventId);
      return 0;
    }
    await lockItem(tx, 'analytics', event.aggregateId);
    const events = await takeItemEvents(tx, 'analytics', event.aggregateId, eventId);
    if (events.length === 0) return 0;
    const rows = await tx.execute<{ wac_q: number; wac_c: string; last_event_id: string }[]>(
      'select wac_q, wac_c, last_event_id from analytics_item where item_id = ?',
      [event.aggregateId],
    );
    const start = rows[0]
      ? { q: rows[0].wac_q, c: toUnits(String(rows[0].wac_c)), lastEventId: String(rows[0].last_event_id) }
      : { q: 0, c: 0n, lastEventId: '0' };
    const fold = foldItemEvents(
      start,
      events.map(e => payloadToFoldEvent(e.id, e.payload)),
    );
    await writeRollups(tx, [fold]);
    return events.length;
  });
}
