import { STOCK_CHANGED } from '../../outbox/events.js';
import { ANALYTICS_CONSUMER, ASYNC_COMMIT_SQL } from '../../outbox/consumers.js';
import { allMarkedCheck, markedCte, pendingBatch, pendingEventsSql } from '../../outbox/pending-events.js';
import { byKey } from '../../shared/sql.js';
import type { SqlRun } from '../../shared/native-transaction.js';
import { formatUnits, toUnits } from '../decimal.js';
import { foldItemEventsInto, type FoldEvent, type FoldRows } from './fold-item-events.js';
import { foldWritesParams, foldWritesSql, type ItemStateJson } from './write-rollups.js';

/** An item's running state before the batch. */
type FoldState = Parameters<typeof foldItemEventsInto>[0];

/**
 * A pending event as the fold reads it, with its item's stored running state (null columns: none stored yet):
 * the statement takes the fold's fields out of the payload, so each event is one row object, decoded once (no
 * payload object parsed from its JSON text, no second object copied from it).
 */
interface PendingRow extends FoldEvent {
  type: string;
  wac_q: number | null;
  wac_c: string | null;
  last_event_id: string | null;
}

/**
 * The oldest pending events of the partitions `parts` (an int[] expression; of one item when `itemId` is not
 * null), in id order, as the fold's events (the payload's fields, `day` still the whole `occurredAt` until
 * foldRows cuts it; a reversal's unit cost, or a receipt's), each with its item's stored running state (weighted average cost)
 * when there is one.
 */
const pendingWithStateSql = (parts: string, limit: string, itemId: string) => `
select o.id::text as id, o.type, p->>'itemId' as "itemId", p->>'itemName' as "itemName",
       p->>'supplierId' as "supplierId", p->>'supplierName' as "supplierName",
       p->>'occurredAt' as day,
       (p->>'change')::integer as change, (p->>'quantityAfter')::integer as "quantityAfter", p->>'reason' as reason,
       p->>'priceAtChange' as "priceAtChange", p->>'createdBy' as "createdBy",
       case when p ? 'reversalOf' then p->>'unitCost' end as "reversalUnitCost",
       case when not p ? 'reversalOf' then p->>'unitCost' end as "unitCost",
       s.wac_q, s.wac_c::text as wac_c, s.last_event_id::text as last_event_id
  from (${pendingEventsSql(ANALYTICS_CONSUMER, parts, limit, itemId)}) o
 cross join lateral (select o.payload as p) j
  left join lateral ${byKey(`select s.wac_q, s.wac_c, s.last_event_id from analytics_item s
                              where s.item_id = (o.payload->>'itemId')::uuid`)} s on o.type = '${STOCK_CHANGED}'
 order by o.id`;

/**
 * The UTC day (yyyy-MM-dd) of an event's `occurredAt`: the write path stores it as Date#toISOString gives it
 * (`2026-11-28T05:30:00.000Z`), whose first ten characters are the day; anything else goes through Date, which
 * throws on a text that is no time (the batch then falls back to one item at a time and that event stays pending).
 */
const utcDay = (occurredAt: string): string =>
  occurredAt.length === 24 && occurredAt[10] === 'T' && occurredAt[23] === 'Z'
    ? occurredAt.slice(0, 10)
    : new Date(occurredAt).toISOString().slice(0, 10);

/**
 * The batch's events folded per item in id order, from each item's stored running state: the rows of every
 * item's fold in one FoldRows (no lists per item) and each item's new running state.
 */
function foldRows(events: PendingRow[]): { rows: FoldRows; states: ItemStateJson[] } {
  const byItem = new Map<string, { start: FoldState; events: FoldEvent[] }>();
  for (const e of events) {
    if (e.type !== STOCK_CHANGED) continue;
    let item = byItem.get(e.itemId);
    if (!item) {
      const start: FoldState =
        e.last_event_id === null
          ? { q: 0, c: 0n, lastEventId: '0' }
          : { q: Number(e.wac_q), c: toUnits(e.wac_c ?? '0'), lastEventId: e.last_event_id };
      byItem.set(e.itemId, (item = { start, events: [] }));
    }
    e.day = utcDay(e.day);
    item.events.push(e);
  }
  const rows: FoldRows = { days: [], reasons: [], users: [] };
  const states: ItemStateJson[] = [];
  for (const [itemId, item] of byItem) {
    const state = foldItemEventsInto(item.start, item.events, rows);
    states.push({
      item_id: itemId,
      wac_q: state.q,
      wac_c: formatUnits(state.c),
      last_event_id: state.lastEventId,
    });
  }
  return { rows, states };
}

/**
 * Folds the events, merges the deltas into the rollups and marks the events done in ONE statement
 * (foldWritesSql: upserts grouped per rollup key, in key order so concurrent partitions never deadlock),
 * committing without waiting for the WAL flush (ANALYTICS_CONSUMER.asyncCommit). Returns how many.
 */
async function writeBatch(sql: SqlRun, events: PendingRow[]): Promise<number> {
  if (events.length === 0) return 0;
  const { rows, states } = foldRows(events);
  await sql(WRITE_BATCH_SQL, [...foldWritesParams(rows, states), events.map(e => e.id)]);
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
