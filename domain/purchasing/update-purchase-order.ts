import type { EntityManager } from '@mikro-orm/postgresql';
import { lockOrder, bumpVersion } from './lock-order.js';
import { checkOrderInput, writeOrderInput, type PurchaseOrderInput } from './order-lines.js';
import { toPurchaseOrderView, type PurchaseOrderView } from './purchase-order.view.js';

/** The order update: 404 -> 412 -> 409 unless DRAFT -> the rules of order creation; the lines are replaced by the input's. */
export async function updatePurchaseOrder(
  em: EntityManager,
  input: PurchaseOrderInput & { id: string; expectedVersion?: number },
): Promise<PurchaseOrderView> {
  return em.transactional(async tx => {
    const order = await lockOrder(tx, input.id, input.expectedVersion, ['DRAFT']);
    writeOrderInput(tx, order, await checkOrderInput(tx, input));
    bumpVersion(order);
    await tx.flush();
    return toPurchaseOrderView(order);
  });
}
