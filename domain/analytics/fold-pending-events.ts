import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { ANALYTICS_CONSUMER } from '../outbox/consumers.js';
import { markEventsDone, pendingEventsSql } from '../outbox/pending-events.js';
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

/** An item's running state before the batch. */
type FoldState = Parameters<typeof foldItemEvents>[0];

/**
 * The oldest pending events of the partitions (of one item when given), in id order, each with its item's
 * stored running state (weighted average cost) when there is one: one read per batch.
 */
const PENDING_WITH_STATE_SQL = `
select o.id::text as id, o.type, o.payload, s.wac_q, s.wac_c::text as wac_c, s.last_event_id::text as last_event_id
  from (${pendingEventsSql(ANALYTICS_CONSUMER, '$1::int[]', '$2', '$3')}) o
  left join analytics_item s on o.type = '${STOCK_CHANGED}' and s.item_id = (o.payload->>'itemId')::uuid
 order by o.id`;

/**
 * The analytics consumer's batch: the oldest pending events of a partition with their items' stored running
 * state, folded per item in id order, merged into the rollups set-based (writeRollups: upserts grouped per
 * rollup key, in key order so concurrent partitions never deadlock) and marked done - all in the caller's
 * transaction.
 */
export const foldPendingEvents: ConsumerBatch = async (sql, parts, limit, itemId) => {
  const events = await sql<{
    id: string;
    type: string;
    payload: StockChangedPayload;
    wac_q: number | null;
    wac_c: string | null;
    last_event_id: string | null;
  }>(PENDING_WITH_STATE_SQL, [parts, limit, itemId ?? null]);
  if (events.length === 0) return 0;
  const byItem = new Map<string, { start: FoldState; events: FoldEvent[] }>();
  for (const e of events) {
    if (e.type !== STOCK_CHANGED) continue;
    let item = byItem.get(e.payload.itemId);
    if (!item) {
      const start: FoldState =
        e.last_event_id === null
          ? { q: 0, c: 0n, lastEventId: '0' }
          : { q: Number(e.wac_q), c: toUnits(e.wac_c ?? '0'), lastEventId: e.last_event_id };
      byItem.set(e.payload.itemId, (item = { start, events: [] }));
    }
    item.events.push(payloadToFoldEvent(e.id, e.payload));
  }
  const folds: FoldResult[] = [...byItem.values()].map(item => foldItemEvents(item.start, item.events));
  await writeRollups(sql, folds);
  // The markers last, in a statement of their own: the outbox rows, which the other consumers mark too, stay
  // locked only for it and the commit (inside the rollup statement they waited with it on shared rollup rows).
  await markEventsDone(
    sql,
    ANALYTICS_CONSUMER,
    events.map(e => e.id),
  );
  return events.length;
};
