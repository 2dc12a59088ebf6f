import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { pendingRowsInsert } from '../outbox/consumers.js';
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
 * quantities this change produced (StockChangedPayload).
 */
const ADJUST_SQL = `
with u as (
  update inventory_item i
     set quantity = i.quantity + ?, version = i.version + 1, updated_at = clock_timestamp()
    from supplier s
   where s.id = i.supplier_id and i.id = ? and i.quantity + ?::bigint between 0 and ${MAX_ITEM_QUANTITY}
     and (?::integer is null or i.quantity = ?::integer)
     and (?::integer is null or i.version = ?::integer)
  returning i.*, s.name as supplier_name, i.updated_at as changed_at
), c as (${itemChangeInsert('u', 'updated', 'u.changed_at')}
), e as (
  insert into outbox_event (type, aggregate_id, payload)
  select '${STOCK_CHANGED}', u.id::text, jsonb_build_object(
    'itemId', u.id, 'itemName', u.name, 'supplierId', u.supplier_id, 'supplierName', u.supplier_name,
    'change', ?::integer, 'quantityBefore', u.quantity - ?::integer, 'quantityAfter', u.quantity,
    'minimumQuantity', u.minimum_quantity, 'reason', ?::text, 'priceAtChange', u.price::text,
    'createdBy', ?::text,
    'occurredAt', to_char(u.changed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'correlationId', ?::text) || coalesce(?::jsonb, '{}'::jsonb)
  from u
  returning id, part
), p as (${pendingRowsInsert('e')}
)
select u.id, u.name, u.sku, u.quantity, u.price::text as price, (u.quantity * u.price)::text as total_value,
       u.supplier_id, u.supplier_name, u.minimum_quantity, u.on_order_quantity, u.reorder_point,
       u.order_up_to_quantity, u.created_by, ${isoSql('u.created_at')} as created_at,
       ${isoSql('u.updated_at')} as updated_at, u.version, (select id from e)::text as event_id,
       ${isoSql('u.changed_at')} as changed_at
  from u`;

/**
 * I8: a guarded atomic update (never a read-modify-write; PostgreSQL re-checks the WHERE clause on the newest
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
      input.delta,
      input.expectedQuantity ?? null,
      input.expectedQuantity ?? null,
      input.expectedVersion ?? null,
      input.expectedVersion ?? null,
      input.delta,
      input.delta,
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
