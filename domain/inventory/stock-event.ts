import type { EntityManager } from '@mikro-orm/postgresql';
import { stockChangedInsertSql } from '../outbox/stock-changed-payload.js';
import type { WriteContext } from '../shared/write-context.js';
import type { ItemRow } from './item.view.js';
import type { InventoryItem } from './inventory-item.entity.js';

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

/** What an event needs to know about an item of the unit of work (its supplier loaded). */
export const eventItemOf = (item: InventoryItem): StockEventItem => ({
  id: item.id,
  name: item.name,
  supplier_id: item.supplier.id,
  supplier_name: item.supplier.name,
  minimum_quantity: item.minimumQuantity,
  price: item.price,
});

/**
 * The event of one change, written from its values (bound once each, as columns of `v`), the payload as every
 * stock event's (stockChangedPayloadSql). `occurredAt` is the change's time when given, else read after the row
 * lock is held (clock_timestamp), so an item's events are in id and time order.
 */
const eventSql = (deleted: boolean): string => `
with v as (
  select ?::uuid as id, ?::text as name, ?::uuid as supplier_id, ?::text as supplier_name,
         ?::integer as minimum_quantity, ?::numeric(12, 2) as price, ?::integer as change,
         ?::integer as quantity_before, ?::text as reason, ?::text as created_by, ?::text as correlation_id,
         coalesce(?::timestamptz, clock_timestamp()) as at
), ${stockChangedInsertSql(
  'e',
  'v',
  'v.supplier_name',
  {
    change: 'v.change',
    quantityBefore: 'v.quantity_before',
    quantityAfter: 'v.quantity_before + v.change',
    reason: 'v.reason',
    ...(deleted ? { deleted: 'true' } : {}),
    createdBy: 'v.created_by',
    correlationId: 'v.correlation_id',
    at: 'v.at',
  },
  'from v',
)}
select id from e`;

const EVENT_SQL = eventSql(false);
const DELETION_EVENT_SQL = eventSql(true);

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
  const rows = await em.execute<{ id: string }[]>(change.deleted ? DELETION_EVENT_SQL : EVENT_SQL, [
    row.id,
    row.name,
    row.supplier_id,
    row.supplier_name,
    Number(row.minimum_quantity),
    row.price,
    change.change,
    change.quantityBefore,
    change.reason,
    context.user,
    context.correlationId,
    change.at instanceof Date ? change.at.toISOString() : (change.at ?? null),
  ]);
  return String(rows[0].id);
}
