import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { pendingRowsInsert } from '../outbox/consumers.js';
import type { WriteContext } from '../shared/write-context.js';
import type { ItemRow } from './item.view.js';

export interface StockChange {
  change: number;
  quantityBefore: number;
  reason: string;
  deleted?: boolean;
  /**
   * When it happened: the time of the change's item-change record (recordItemChange), or for history written
   * after the fact (the demo seed); default: now, under the row lock.
   */
  at?: Date | string;
}

/** What an event needs to know about its item. */
export type StockEventItem = Pick<
  ItemRow,
  'id' | 'name' | 'supplier_id' | 'supplier_name' | 'minimum_quantity' | 'price'
>;

/**
 * Writes the outbox row of a stock change inside the caller's transaction. It carries everything the history
 * entry (and alerts/analytics) need, as of this transaction: item and supplier names, quantities, unit price.
 */
export async function recordStockChanged(
  em: EntityManager,
  row: StockEventItem,
  change: StockChange,
  context: WriteContext,
): Promise<string> {
  const payload: Omit<StockChangedPayload, 'occurredAt'> = {
    itemId: row.id,
    itemName: row.name,
    supplierId: row.supplier_id,
    supplierName: row.supplier_name,
    change: change.change,
    quantityBefore: change.quantityBefore,
    quantityAfter: change.quantityBefore + change.change,
    minimumQuantity: Number(row.minimum_quantity),
    reason: change.reason,
    priceAtChange: Number(row.price).toFixed(2),
    ...(change.deleted ? { deleted: true } : {}),
    createdBy: context.user,
    correlationId: context.correlationId,
  };
  // occurredAt is read after the row lock is held (clock_timestamp), so an item's events are in id and time order.
  const rows = await em.execute<{ id: string }[]>(
    `with e as (
       insert into outbox_event (type, aggregate_id, payload)
       values (?, ?, ?::jsonb || jsonb_build_object('occurredAt',
         to_char(coalesce(?::timestamptz, clock_timestamp()) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')))
       returning id, part),
     p as (${pendingRowsInsert('e')})
     select id from e`,
    [
      STOCK_CHANGED,
      row.id,
      JSON.stringify(payload),
      change.at instanceof Date ? change.at.toISOString() : (change.at ?? null),
    ],
  );
  return String(rows[0].id);
}
