import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError } from '../shared/errors.js';
import { addOnOrder, bumpVersion, lockItems, lockOrder } from './lock-order.js';
import { supplierMismatch } from './purchasing-errors.js';
import { toPurchaseOrderView, type PurchaseOrderView } from './purchase-order.view.js';
import { recordOrderEvent } from './order-events.js';

/** Today (UTC) plus `days`, as a date. */
const daysFromToday = (days: number): string =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/**
 * Placing an order: 404 -> 412 -> 409 unless DRAFT -> 409 for a line whose item was deleted or now belongs to another
 * supplier. Then ORDERED with `orderedAt`, `expectedAt` (when unset: today + the supplier's lead time, else
 * `defaultLeadDays`), every line's quantity added to its item's `onOrderQuantity`, and the
 * `purchase_order.ordered` event, in one transaction (order row locked first, then its items in id order).
 */
export async function placePurchaseOrder(
  em: EntityManager,
  input: { id: string; expectedVersion?: number; defaultLeadDays: number },
): Promise<{ order: PurchaseOrderView; eventIds: string[] }> {
  return em.transactional(async tx => {
    const order = await lockOrder(tx, input.id, input.expectedVersion, ['DRAFT']);
    const lines = order.lines.getItems();
    const items = await lockItems(
      tx,
      lines.map(line => line.itemId),
    );
    for (const line of lines) {
      const supplierId = items.get(line.itemId);
      if (supplierId === undefined)
        throw new ConflictError('purchase.line.item.deleted', { params: { itemId: line.itemId } });
      if (supplierId !== order.supplier.id) throw supplierMismatch(line.itemId);
    }
    await addOnOrder(
      tx,
      lines.map(line => ({ itemId: line.itemId, delta: line.quantityOrdered })),
    );
    order.status = 'ORDERED';
    order.orderedAt = new Date();
    order.expectedAt ??= daysFromToday(order.supplier.leadTimeDays ?? input.defaultLeadDays);
    bumpVersion(order);
    await tx.flush();
    const view = toPurchaseOrderView(order);
    return {
      order: view,
      eventIds: [await recordOrderEvent(tx, 'purchase_order.ordered', view)],
    };
  });
}
