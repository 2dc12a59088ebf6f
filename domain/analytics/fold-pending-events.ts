import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { markEventsDone, pendingEvents } from '../outbox/pending-events.js';
import { ANALYTICS_CONSUMER } from '../outbox/consumers.js';
import type { ConsumerBatch } from '../outbox/drain-consumer.js';
import { toUnits } from './decimal.js';
import { foldItemEvents, type FoldEvent, type FoldResult } from './fold-item-events.js';
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
 * The analytics consumer's batch: the oldest pending events of a partition, folded per item in id order from
 * each item's stored running state (weighted average cost), merged into the rollups set-based
 * (writeRollups: upserts grouped per rollup key, in key order so concurrent partitions never deadlock), and
 * marked done - all in the caller's transaction.
 */
export const foldPendingEvents: ConsumerBatch = async (sql, parts, limit, itemId) => {
  const events = await pendingEvents(sql, ANALYTICS_CONSUMER, parts, limit, itemId);
  if (events.length === 0) return 0;
  const byItem = new Map<string, FoldEvent[]>();
  for (const e of events) {
    if (e.type !== STOCK_CHANGED) continue;
    const list = byItem.get(e.payload.itemId) ?? [];
    list.push(payloadToFoldEvent(e.id, e.payload));
    byItem.set(e.payload.itemId, list);
  }
  const states = await sql<{
    item_id: string;
    wac_q: number;
    wac_c: string;
    last_event_id: string;
  }>(
    `select item_id, wac_q, wac_c::text, last_event_id::text from analytics_item
     where item_id in (select jsonb_array_elements_text($1::jsonb)::uuid)`,
    [JSON.stringify([...byItem.keys()])],
  );
  const start = new Map(states.map(s => [s.item_id, s]));
  const folds: FoldResult[] = [...byItem].map(([id, list]) => {
    const s = start.get(id);
    return foldItemEvents(
      s
        ? { q: s.wac_q, c: toUnits(s.wac_c), lastEventId: s.last_event_id }
        : { q: 0, c: 0n, lastEventId: '0' },
      list,
    );
  });
  await writeRollups(sql, folds);
  await markEventsDone(
    sql,
    ANALYTICS_CONSUMER,
    events.map(e => e.id),
  );
  return events.length;
};
