import { STOCK_CHANGED } from '../outbox/events.js';
import { STOCK_HISTORY_CONSUMER } from '../outbox/consumers.js';
import { pendingIdsSql, stillPending } from '../outbox/pending-events.js';
import type { ConsumerBatch, OneStatementBatch } from '../outbox/drain-consumer.js';

/**
 * The stock-history consumer's batch as ONE statement: the oldest pending events of the partitions `parts` (a
 * select with a `part` column) get their marker and one history entry each, in id order, with the per-event
 * content of the outbox payload. Only the events this statement itself marked are inserted, read from the rows
 * the update returns (a join of the batch with them was planned as a nested loop: 250 x 250 comparisons for a
 * full batch, ~45% of its time), and the unique outbox_event_id makes any repeat a no-op, so an event is
 * recorded exactly once whatever crashes or duplicate runs happen. The rows are locked in id order (the other
 * consumers mark the same rows the same way, so they wait on each other but never deadlock); a row another run
 * marked after this statement's snapshot is re-checked when it is locked and skipped.
 */
const recordSql = (parts: string, limit: string, itemId: string) => `
with parts as materialized (${parts}), ev as (
  select e.id, e.type, e.payload, e.created_at
    from (${pendingIdsSql(STOCK_HISTORY_CONSUMER, '(select array_agg(part) from parts)', limit, itemId)}) i
    join outbox_event e on e.id = i.id
   where ${stillPending(STOCK_HISTORY_CONSUMER, 'e')}
   order by e.id
   for update of e
), marked as (
  update outbox_event o set history_done_at = clock_timestamp()
    from ev where o.id = ev.id and ${stillPending(STOCK_HISTORY_CONSUMER, 'o')}
  returning o.id, o.type, o.payload, o.created_at
), ins as (
  insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
    quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp", correlation_id)
  select m.id, (m.payload->>'itemId')::uuid, m.payload->>'itemName', (m.payload->>'supplierId')::uuid,
    m.payload->>'supplierName', (m.payload->>'change')::integer, (m.payload->>'quantityBefore')::integer,
    (m.payload->>'quantityAfter')::integer, m.payload->>'reason', (m.payload->>'priceAtChange')::numeric,
    m.payload->>'createdBy', coalesce((m.payload->>'occurredAt')::timestamptz, m.created_at),
    m.payload->>'correlationId'
  from marked m
  where m.type = '${STOCK_CHANGED}'
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

/** The fast path: the statement takes its partitions itself and is its own transaction. */
export const recordStockChangesAlone: OneStatementBatch = async (run, take, params, limit) => {
  const [row] = await run<{ parts: number[]; n: number }>(recordSql(take, '$4', 'null'), [...params, limit]);
  return { parts: row.parts.map(Number), applied: Number(row.n) };
};
