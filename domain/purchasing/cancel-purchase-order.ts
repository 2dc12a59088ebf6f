import type { EntityManager } from '@mikro-orm/postgresql';
import { addOnOrder, bumpVersion, lockItems, lockOrder } from './lock-order.js';
import { toPurchaseOrderView, type PurchaseOrderView } from './purchase-order.view.js';
import { recordOrderEvent } from './order-events.js';

/**
 * Order cancellation: 404 -> 412 -> 409 when RECEIVED or CANCELLED. Then CANCELLED with `cancelledAt`; an ORDERED or
 * PARTIALLY_RECEIVED order's open quantities leave its items' `onOrderQuantity` (what was received stays), and
 * the `purchase_order.cancelled` event, in one transaction (order row first, then its items in id order).
 */
export async function cancelPurchaseOrder(
  em: EntityManager,
  input: { id: string; expectedVersion?: number },
): Promise<{ order: PurchaseOrderView; eventIds: string[] }> {
  return em.transactional(async tx => {
    const order = await lockOrder(tx, input.id, input.expectedVersion, [
      'DRAFT',
      'ORDERED',
      'PARTIALLY_RECEIVED',
    ]);
    if (order.status !== 'DRAFT') {
      const lines = order.lines.getItems();
      const present = await lockItems(
        tx,
        lines.map(line => line.itemId),
      );
      await addOnOrder(
        tx,
        lines
          .filter(line => present.has(line.itemId))
          .map(line => ({ itemId: line.itemId, delta: line.quantityReceived - line.quantityOrdered })),
      );
    }
    order.status = 'CANCELLED';
    order.cancelledAt = new Date();
    bumpVersion(order);
    await tx.flush();
    const view = toPurchaseOrderView(order);
    return {
      order: view,
      eventIds: [await recordOrderEvent(tx, 'purchase_order.cancelled', view)],
    };
  });
}
