import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { arrayLiteral, isUuid } from '../shared/sql.js';
import { PurchaseOrder, type OrderStatus } from './purchase-order.entity.js';
import { orderNotFound, staleOrder, wrongStatus } from './purchasing-errors.js';

/**
 * The first steps of every order write, in the contract's order: 404 -> 412 (`If-Match`) -> 409 unless the
 * status is one of `allowed`. The order row is locked (FOR UPDATE) before anything else of the order is read:
 * every writer takes the order first and its items after, in id order (lockItems), so two writers of one
 * order queue on its row and never deadlock on its items.
 */
export async function lockOrder(
  tx: EntityManager,
  id: string,
  expectedVersion: number | undefined,
  allowed: readonly OrderStatus[],
): Promise<PurchaseOrder> {
  if (!isUuid(id)) throw orderNotFound();
  const order = await tx.findOne(PurchaseOrder, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!order) throw orderNotFound();
  if (expectedVersion !== undefined && order.version !== expectedVersion) throw staleOrder();
  if (!allowed.includes(order.status)) throw wrongStatus(order.status);
  await tx.populate(order, ['supplier', 'lines']);
  return order;
}

/** The items of `ids` that still exist, locked in id order (after their order): id -> supplier id. */
export async function lockItems(tx: EntityManager, ids: string[]): Promise<Map<string, string>> {
  const rows = await tx.execute<{ id: string; supplier_id: string }[]>(
    'select id, supplier_id from inventory_item where id = any(?::uuid[]) order by id for update',
    [arrayLiteral(ids)],
  );
  return new Map(rows.map(row => [row.id, row.supplier_id]));
}

/**
 * Adds each delta to its item's `onOrderQuantity` (one set-based statement; the items are locked by the
 * caller). Not an item change: no version, no item-change record.
 */
export async function addOnOrder(
  tx: EntityManager,
  deltas: { itemId: string; delta: number }[],
): Promise<void> {
  const changed = deltas.filter(d => d.delta !== 0);
  if (changed.length === 0) return;
  await tx.execute(
    `update inventory_item i set on_order_quantity = i.on_order_quantity + x.delta
       from unnest(?::uuid[], ?::int[]) as x(id, delta) where i.id = x.id`,
    [arrayLiteral(changed.map(d => d.itemId)), arrayLiteral(changed.map(d => d.delta))],
  );
}

/** The order after a write: a new version (its ETag). */
export const bumpVersion = (order: PurchaseOrder): void => {
  order.version += 1;
};
