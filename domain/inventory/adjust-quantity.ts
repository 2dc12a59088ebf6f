import type { StockChangedPayload } from '../outbox/events.js';
import { stockChangedInsertSql } from '../outbox/stock-changed-payload.js';
import type { WriteContext } from '../shared/write-context.js';
import { isoSql, isUuid } from '../shared/sql.js';
import { dbQuery, type Db } from '../shared/pool-query.js';
import { normaliseReason } from './reasons.js';
import { itemNotFound, negativeStock, quantityTooLarge, staleItem } from './item-errors.js';
import { MAX_ITEM_QUANTITY } from './inventory.schemas.js';
import { toItemView, type ItemRow } from './item.view.js';
import { itemChangeInsert } from './item-change.js';
import type { StockWriteResult } from './create-item.js';

export interface AdjustQuantityInput {
  id: string;
  delta: number;
  reason: string;
  expectedQuantity?: number;
  /** From `If-Match`. */
  expectedVersion?: number;
  /** More payload of the event (a reversal's link to its original, StockChangedPayload). */
  payload?: Partial<StockChangedPayload>;
}

/**
 * The guarded update, its item-change record and its outbox row in ONE statement (a statement is atomic, and joins the caller's
 * transaction when there is one). The change's time is the row's new `updated_at`, a clock_timestamp() taken
 * with the row (re-evaluated after a wait for its lock), so the instant the API shows is the change's own. The row lock is held for a single round trip, which is what bounds the
 * throughput of a hot item. The event payload is built from the updated row, so it carries exactly the
 * quantities this change produced (StockChangedPayload). Each input is bound once, as a column of `a`.
 * Exported for the bench's bare baseline, which runs the same statement.
 */
export const ADJUST_SQL = `
with a as (
  select ?::bigint as delta, ?::uuid as id, ?::integer as expected_quantity, ?::integer as expected_version,
         ?::text as reason, ?::text as created_by, ?::text as correlation_id, ?::jsonb as extra
), u as (
  update inventory_item i
     set quantity = i.quantity + a.delta, version = i.version + 1, updated_at = clock_timestamp()
    from a, supplier s
   where s.id = i.supplier_id and i.id = a.id and i.quantity + a.delta between 0 and ${MAX_ITEM_QUANTITY}
     and (a.expected_quantity is null or i.quantity = a.expected_quantity)
     and (a.expected_version is null or i.version = a.expected_version)
  returning i.*, s.name as supplier_name, i.updated_at as changed_at
), c as (${itemChangeInsert('u', 'updated', 'u.changed_at')}
), ${stockChangedInsertSql(
  'e',
  'u',
  'u.supplier_name',
  {
    change: 'a.delta::integer',
    quantityBefore: '(u.quantity - a.delta)::integer',
    quantityAfter: 'u.quantity',
    reason: 'a.reason',
    createdBy: 'a.created_by',
    correlationId: 'a.correlation_id',
    at: 'u.changed_at',
    extra: 'a.extra',
  },
  'from u, a',
)}
select u.id, u.name, u.sku, u.quantity, u.price::text as price, (u.quantity * u.price)::text as total_value,
       u.supplier_id, u.supplier_name, u.minimum_quantity, u.on_order_quantity, u.reorder_point,
       u.order_up_to_quantity, u.created_by, ${isoSql('u.created_at')} as created_at,
       ${isoSql('u.updated_at')} as updated_at, u.version, (select id from e)::text as event_id,
       ${isoSql('u.changed_at')} as changed_at
  from u`;

/**
 * The quantity adjustment: a guarded atomic update (never a read-modify-write; PostgreSQL re-checks the WHERE clause on the newest
 * row version after waiting for a concurrent writer, so no update is lost and stock never goes below 0) plus
 * the outbox event, committed together. When the update matches nothing, the current row tells why:
 * 404 -> 412 (expectedQuantity / If-Match) -> 422 (would go negative, or above the maximum quantity: the bound
 * is part of the guarded WHERE clause, so concurrent adjustments cannot pass it together either).
 */
export async function adjustQuantity(
  db: Db,
  input: AdjustQuantityInput,
  context: WriteContext,
): Promise<StockWriteResult> {
  if (!isUuid(input.id)) throw itemNotFound();
  const reason = normaliseReason(input.reason);
  for (let attempt = 0; ; attempt++) {
    const rows = await dbQuery<ItemRow & { event_id: string; changed_at: string }>(db, ADJUST_SQL, [
      input.delta,
      input.id,
      input.expectedQuantity ?? null,
      input.expectedVersion ?? null,
      reason,
      context.user,
      context.correlationId,
      input.payload ? JSON.stringify(input.payload) : null,
    ]);
    if (rows.length > 0)
      return { item: toItemView(rows[0]), eventIds: [String(rows[0].event_id)], at: rows[0].changed_at };
    const current = await dbQuery<{ quantity: number; version: number }>(
      db,
      'select quantity, version from inventory_item where id = ?',
      [input.id],
    );
    if (current.length === 0) throw itemNotFound();
    const { quantity, version } = current[0];
    if (input.expectedQuantity !== undefined && quantity !== input.expectedQuantity) throw staleItem();
    if (input.expectedVersion !== undefined && version !== input.expectedVersion) throw staleItem();
    if (quantity + input.delta > MAX_ITEM_QUANTITY) throw quantityTooLarge();
    if (quantity + input.delta < 0 || attempt >= 10) throw negativeStock();
    // The row changed between the update and this read in a way that now allows the change: try again.
  }
}
