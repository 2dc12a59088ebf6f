import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { ANALYTICS_CONSUMER, ASYNC_COMMIT_SQL } from '../outbox/consumers.js';
import { allMarkedCheck, markedCte, pendingBatch, pendingEventsSql } from '../outbox/pending-events.js';
import { byKey } from '../shared/sql.js';
import type { SqlRun } from '../shared/native-transaction.js';
import { toUnits } from './decimal.js';
import { foldItemEvents, type FoldEvent, type FoldResult } from './fold-item-events.js';
import { foldWritesParams, foldWritesSql } from './write-rollups.js';

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
  ...(p.reversalOf !== undefined && p.unitCost !== undefined ? { reversalUnitCost: p.unitCost } : {}),
});

/** An item's running state before the batch. */
type FoldState = Parameters<typeof foldItemEvents>[0];

/** A pending event with its item's stored running state (null columns: none stored yet). */
interface PendingRow {
  id: string;
  type: string;
  payload: StockChangedPayload;
  wac_q: number | null;
  wac_c: string | null;
  last_event_id: string | null;
}

/**
 * The oldest pending events of the partitions `parts` (an int[] expression; of one item when `itemId` is not
 * null), in id order, each with its item's stored running state (weighted average cost) when there is one.
 */
const pendingWithStateSql = (parts: string, limit: string, itemId: string) => `
select o.id::text as id, o.type, o.payload, s.wac_q, s.wac_c::text as wac_c, s.last_event_id::text as last_event_id
  from (${pendingEventsSql(ANALYTICS_CONSUMER, parts, limit, itemId)}) o
  left join lateral ${byKey(`select s.wac_q, s.wac_c, s.last_event_id from analytics_item s
                              where s.item_id = (o.payload->>'itemId')::uuid`)} s on o.type = '${STOCK_CHANGED}'
 order by o.id`;

/** The batch's events folded per item in id order, from each item's stored running state. */
function foldRows(events: PendingRow[]): FoldResult[] {
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
  return [...byItem.values()].map(item => foldItemEvents(item.start, item.events));
}

/**
 * Folds the events, merges the deltas into the rollups and marks the events done in ONE statement
 * (foldWritesSql: upserts grouped per rollup key, in key order so concurrent partitions never deadlock),
 * committing without waiting for the WAL flush (ANALYTICS_CONSUMER.asyncCommit). Returns how many.
 */
async function writeBatch(sql: SqlRun, events: PendingRow[]): Promise<number> {
  if (events.length === 0) return 0;
  await sql(WRITE_BATCH_SQL, [...foldWritesParams(foldRows(events)), events.map(e => e.id)]);
  return events.length;
}

/** Built once: a batch's statement text is the same every time (and so is its prepared statement's name). */
const WRITE_BATCH_SQL = foldWritesSql(
  markedCte(ANALYTICS_CONSUMER, '$5'),
  allMarkedCheck(ANALYTICS_CONSUMER, 'cardinality($5::bigint[])'),
  `, ${ASYNC_COMMIT_SQL}`,
);

/**
 * The analytics consumer's batch: the oldest pending events of the partitions with their items' stored running
 * state, then their fold, rollups and markers in one statement (its `held` fast path: pendingBatch).
 */
export const foldPendingEvents = pendingBatch<PendingRow>(pendingWithStateSql, writeBatch);
