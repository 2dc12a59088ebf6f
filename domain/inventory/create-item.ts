import { randomUUID } from 'node:crypto';
import { TransactionPropagation, type EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { isUuid } from '../shared/sql.js';
import { ValidationError } from '../shared/errors.js';
import { lowerEquals } from '../shared/lower-equals.js';
import { moneyText } from '../shared/money.js';
import { Supplier } from '../suppliers/supplier.entity.js';
import { InventoryItem } from './inventory-item.entity.js';
import { duplicateItemName, duplicateSku, supplierNotFound } from './item-errors.js';
import { itemViewOf, type ItemView } from './item.view.js';
import { eventItemOf, recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';

export interface ItemInput {
  name: string;
  quantity: number;
  price: number;
  supplierId: string;
  minimumQuantity: number;
  sku?: string | null;
  /** Absent: keep the stored value (none on create); null: computed. */
  reorderPoint?: number | null;
  orderUpToQuantity?: number | null;
}

/** An item's own replenishment levels as they end up: the input's where given, else the stored ones. */
export interface OrderLevels {
  reorderPoint: number | null;
  orderUpToQuantity: number | null;
}

/** The levels after applying `input` to `stored`; 400 unless orderUpToQuantity > reorderPoint when both are set. */
export function orderLevelsOf(input: ItemInput, stored: OrderLevels): OrderLevels {
  const levels = {
    reorderPoint: input.reorderPoint !== undefined ? input.reorderPoint : stored.reorderPoint,
    orderUpToQuantity:
      input.orderUpToQuantity !== undefined ? input.orderUpToQuantity : stored.orderUpToQuantity,
  };
  if (
    levels.reorderPoint !== null &&
    levels.orderUpToQuantity !== null &&
    levels.orderUpToQuantity <= levels.reorderPoint
  )
    throw new ValidationError('inventory.item.order.up.to.above', {
      fieldErrors: [{ field: 'orderUpToQuantity', messageKey: 'inventory.item.order.up.to.above' }],
    });
  return levels;
}

export interface StockWriteResult {
  item: ItemView;
  /** Outbox events written by the transaction; published after commit. */
  eventIds: string[];
  /** When the change happened (its stock event's time), where the caller needs it. */
  at?: string;
}

/**
 * Inside a caller's transaction (an Idempotency-Key write, a CSV import) the use case joins it instead of
 * opening a savepoint: it refuses before it writes, and any database error fails the caller's transaction
 * anyway. Alone, it opens its own transaction as before. A fresh object per call: MikroORM writes the
 * transaction context into the options it is given.
 */
export const joinCaller = () => ({ propagation: TransactionPropagation.REQUIRED });

export const skuOf = (input: ItemInput): string | null => (input.sku ? input.sku : null);

/** Whether an item other than `exceptId` holds `value` in `column` (case-insensitively, as its unique index). */
export async function itemHolds(
  tx: EntityManager,
  column: 'name' | 'sku',
  value: string,
  exceptId?: string,
): Promise<boolean> {
  const others = exceptId === undefined ? {} : { id: { $ne: exceptId } };
  return (await tx.count(InventoryItem, { ...lowerEquals(column, value), ...others })) > 0;
}

/**
 * Duplicate name, then duplicate sku (409, case-insensitive, other items than `exceptId`), then supplier (404):
 * the contract's order. Returns the supplier. The unique indexes close the race of two writers (409 as well).
 */
export async function checkItemClashes(
  tx: EntityManager,
  input: ItemInput,
  exceptId?: string,
): Promise<Supplier> {
  if (await itemHolds(tx, 'name', input.name, exceptId)) throw duplicateItemName();
  const sku = skuOf(input);
  if (sku !== null && (await itemHolds(tx, 'sku', sku, exceptId))) throw duplicateSku();
  const supplier = isUuid(input.supplierId)
    ? await tx.findOne(Supplier, input.supplierId, { refresh: true })
    : null;
  if (!supplier) throw supplierNotFound();
  return supplier;
}

/** The fields of an item an input sets (create and PUT), its own levels already checked (orderLevelsOf). */
export const itemFields = (input: ItemInput, supplier: Supplier, levels: OrderLevels) => ({
  name: input.name,
  sku: skuOf(input),
  quantity: input.quantity,
  price: moneyText(input.price),
  minimumQuantity: input.minimumQuantity,
  supplier,
  ...levels,
});

/**
 * Item creation, one transaction of the unit of work: the item, its `created` item change + (quantity > 0) an
 * INITIAL_STOCK outbox event, at the item's creation time.
 */
export async function createItem(
  em: EntityManager,
  input: ItemInput,
  context: WriteContext,
): Promise<StockWriteResult> {
  const levels = orderLevelsOf(input, { reorderPoint: null, orderUpToQuantity: null });
  return em.transactional(async tx => {
    const supplier = await checkItemClashes(tx, input);
    const item = tx.create(InventoryItem, {
      id: randomUUID(),
      ...itemFields(input, supplier, levels),
      onOrderQuantity: 0,
      createdBy: context.user,
      version: 1,
    });
    await tx.flush();
    const at = await recordItemChange(tx, item.id, 'created');
    const eventIds: string[] = [];
    if (input.quantity > 0)
      eventIds.push(
        await recordStockChanged(
          tx,
          eventItemOf(item),
          { change: input.quantity, quantityBefore: 0, reason: 'INITIAL_STOCK', at },
          context,
        ),
      );
    return { item: itemViewOf(item), eventIds };
  }, joinCaller());
}
