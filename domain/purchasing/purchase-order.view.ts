import type { OrderStatus, PurchaseOrder } from './purchase-order.entity.js';

export interface PurchaseOrderLineView {
  itemId: string;
  itemName: string;
  sku: string | null;
  quantityOrdered: number;
  quantityReceived: number;
  unitCost: number;
  lineTotal: number;
}

/** The PurchaseOrder record (the order read). */
export interface PurchaseOrderView {
  id: string;
  number: string;
  supplierId: string;
  supplierName: string;
  status: OrderStatus;
  lines: PurchaseOrderLineView[];
  totalCost: number;
  note: string | null;
  expectedAt: string | null;
  createdBy: string;
  createdAt: string;
  orderedAt: string | null;
  receivedAt: string | null;
  cancelledAt: string | null;
  version: number;
}

const iso = (at: Date | null | undefined): string | null => (at ? at.toISOString() : null);

/** numeric(x,2) text -> integer cents, exactly. */
export const costCents = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2));
};

/** Integer cents -> a JSON number exact to the cent (every cap here keeps it below 2^53). */
export const centsToJson = (cents: bigint): number => Number(cents) / 100;

/** An order with its supplier and lines loaded -> its view. */
export function toPurchaseOrderView(order: PurchaseOrder): PurchaseOrderView {
  return {
    id: order.id,
    number: order.number,
    supplierId: order.supplier.id,
    supplierName: order.supplier.name,
    status: order.status,
    lines: order.lines.getItems().map(line => ({
      itemId: line.itemId,
      itemName: line.itemName,
      sku: line.sku ?? null,
      quantityOrdered: line.quantityOrdered,
      quantityReceived: line.quantityReceived,
      unitCost: Number(line.unitCost),
      lineTotal: centsToJson(costCents(line.unitCost) * BigInt(line.quantityOrdered)),
    })),
    totalCost: Number(order.totalCost),
    note: order.note ?? null,
    expectedAt: order.expectedAt ?? null,
    createdBy: order.createdBy,
    createdAt: order.createdAt.toISOString(),
    orderedAt: iso(order.orderedAt),
    receivedAt: iso(order.receivedAt),
    cancelledAt: iso(order.cancelledAt),
    version: order.version,
  };
}
