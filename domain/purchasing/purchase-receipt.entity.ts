import { defineEntity, p } from '@mikro-orm/postgresql';
import { PurchaseOrderSchema } from './purchase-order.entity.js';

/** A receipt of goods against an order (table `purchase_receipt`, migration Purchasing). */
export const PurchaseReceiptSchema = defineEntity({
  name: 'PurchaseReceipt',
  tableName: 'purchase_receipt',
  properties: {
    id: p.uuid().primary(),
    purchaseOrder: () => p.manyToOne(PurchaseOrderSchema).deleteRule('restrict'),
    note: p.string().length(500).nullable(),
    receivedBy: p.string().length(320),
    receivedAt: p.datetime().onCreate(() => new Date()),
    lines: () => p.oneToMany(PurchaseReceiptLineSchema).mappedBy('receipt').orderBy({ id: 'asc' }),
  },
});

/**
 * One received line (table `purchase_receipt_line`): `entryId` is the id of the stock-history entry reserved in
 * the receiving request (the consumer writes the entry with it).
 */
export const PurchaseReceiptLineSchema = defineEntity({
  name: 'PurchaseReceiptLine',
  tableName: 'purchase_receipt_line',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    receipt: () => p.manyToOne(PurchaseReceiptSchema).deleteRule('cascade'),
    itemId: p.uuid(),
    quantity: p.integer(),
    entryId: p.bigint('string').unique(),
  },
});

export class PurchaseReceipt extends PurchaseReceiptSchema.class {}
PurchaseReceiptSchema.setClass(PurchaseReceipt);
export class PurchaseReceiptLine extends PurchaseReceiptLineSchema.class {}
PurchaseReceiptLineSchema.setClass(PurchaseReceiptLine);
