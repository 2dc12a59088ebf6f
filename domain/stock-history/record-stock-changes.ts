import { STOCK_CHANGED } from '../outbox/events.js';
import { STOCK_HISTORY_CONSUMER } from '../outbox/consumers.js';
import { markDoneSql, pendingIdsSql } from '../outbox/pending-events.js';
import { byKey } from '../shared/sql.js';
import type { ConsumerBatch, OneStatementBatch } from '../outbox/drain-consumer.js';
import { textCache } from '../shared/native-transaction.js';

/**
 * The stock-history consumer's batch as ONE statement: the oldest pending events of the partitions `parts` (a
 * select with a `part` column) get their marker and one history entry each, in id order, with the per-event
 * content of the outbox payload. Only the events this statement itself marked are inserted, each read by its
 * id from the outbox (byKey), and the unique outbox_event_id makes any repeat a no-op, so an event is recorded
 * exactly once whatever crashes or duplicate runs happen. A reversal's entry takes the id its request reserved. A pending row another run marked after this
 * statement's snapshot is re-checked when the update reaches it and skipped (markDoneSql).
 */
const recordSql = (parts: string, limit: string, itemId: string) => `
with parts as materialized (${parts}), marked as (
  ${markDoneSql(STOCK_HISTORY_CONSUMER, pendingIdsSql(STOCK_HISTORY_CONSUMER, '(select array_agg(part) from parts)', limit, itemId))}
), ins as (
  insert into stock_history (id, reversal_of, unit_cost, note, purchase_order_id, outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
    quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp", correlation_id)
  select coalesce((e.payload->>'entryId')::bigint, nextval('stock_history_id_seq')),
    (e.payload->>'reversalOf')::bigint, (e.payload->>'unitCost')::numeric, e.payload->>'note',
    (e.payload->>'purchaseOrderId')::uuid,
    m.id, (e.payload->>'itemId')::uuid, e.payload->>'itemName', (e.payload->>'supplierId')::uuid,
    e.payload->>'supplierName', (e.payload->>'change')::integer, (e.payload->>'quantityBefore')::integer,
    (e.payload->>'quantityAfter')::integer, e.payload->>'reason', (e.payload->>'priceAtChange')::numeric,
    e.payload->>'createdBy', coalesce((e.payload->>'occurredAt')::timestamptz, e.created_at),
    e.payload->>'correlationId'
  from marked m
  cross join lateral ${byKey('select e.type, e.payload, e.created_at from outbox_event e where e.id = m.id')} e
  where e.type = '${STOCK_CHANGED}'
  order by m.id
  on conflict (outbox_event_id) do nothing
)
select (select coalesce(array_agg(part), '{}') from parts) as parts, (select count(*) from marked)::integer as n`;

/** In the caller's transaction, which holds the partitions (the fallback of a failed batch, one item at a time). */
const RECORD_SQL = recordSql('select unnest($1::int[]) as part', '$2', '$3');

export const recordStockChanges: ConsumerBatch = async (sql, parts, limit, itemId) => {
  const [row] = await sql<{ n: number }>(RECORD_SQL, [parts, limit, itemId ?? null]);
  return Number(row.n);
};

/**
 * The fast path: the statement takes its partitions itself and is its own transaction. Its text for each take
 * text (a few; the drain gives the same string back) is built once, not every batch.
 */
const aloneTexts = textCache();
const aloneSql = (take: string) => recordSql(take, '$4', 'null');

export const recordStockChangesAlone: OneStatementBatch = async (run, take, params, limit) => {
  const [row] = await run<{ parts: number[]; n: number }>(aloneTexts(take, aloneSql), [...params, limit]);
  return { parts: row.parts.map(Number), applied: Number(row.n) };
};
