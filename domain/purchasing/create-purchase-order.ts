import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { PurchaseOrder } from './purchase-order.entity.js';
import { toPurchaseOrderView, type PurchaseOrderView } from './purchase-order.view.js';
import { checkOrderInput, writeOrderInput, type PurchaseOrderInput } from './order-lines.js';

/** `PO-` and at least 6 digits, from a sequence: unique and increasing (a rolled-back order leaves a gap). */
async function nextOrderNumber(tx: EntityManager): Promise<string> {
  const [{ n }] = await tx.execute<{ n: string }[]>("select nextval('purchase_order_number_seq')::text as n");
  return `PO-${n.padStart(6, '0')}`;
}

/**
 * Order creation (and replenishment's draft orders): a DRAFT order with its lines, in one transaction of the unit of work.
 * Rules in the contract's order: see checkOrderInput. Joins the caller's transaction when `em` is in one.
 */
export async function createPurchaseOrder(
  em: EntityManager,
  input: PurchaseOrderInput,
  context: WriteContext,
): Promise<PurchaseOrderView> {
  return em.transactional(async tx => {
    const checked = await checkOrderInput(tx, input);
    const order = tx.create(PurchaseOrder, {
      id: randomUUID(),
      number: await nextOrderNumber(tx),
      supplier: checked.supplier,
      status: 'DRAFT',
      totalCost: '0.00',
      createdBy: context.user,
      version: 1,
    });
    writeOrderInput(tx, order, checked);
    await tx.flush();
    return toPurchaseOrderView(order);
  });
}
