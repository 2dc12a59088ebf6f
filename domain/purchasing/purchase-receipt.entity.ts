import { defineEntity, p } from '@mikro-orm/postgresql';
import { PurchaseOrderSchema } from './purchase-order.entity.js';

/** A receipt of goods against an order (table `purchase_receipt`, migration Purchasing). */
export const PurchaseReceiptSchema = defineEntity({
  name: 'PurchaseReceipt',
  tableName: 'purchase_receipt',
  properties: {
    id: p.uuid().primary().defaultRaw('gen_random_uuid()'),
    purchaseOrder: () =>
      p
        .manyToOne(PurchaseOrderSchema)
        .deleteRule('restrict')
        .foreignKeyName('purchase_receipt_purchase_order_id_fkey'),
    note: p.string().length(500).nullable(),
    receivedBy: p.string().length(320),
    receivedAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
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
  uniques: [{ name: 'purchase_receipt_line_receipt_id_item_id_key', properties: ['receipt', 'itemId'] }],
  properties: {
    id: p.bigint('string').primary().autoincrement().generated('identity'),
    receipt: () =>
      p
        .manyToOne(PurchaseReceiptSchema)
        .deleteRule('cascade')
        .foreignKeyName('purchase_receipt_line_receipt_id_fkey'),
    itemId: p.uuid(),
    quantity: p.integer(),
    entryId: p.bigint('string').unique('purchase_receipt_line_entry_id_key'),
  },
});

export class PurchaseReceipt extends PurchaseReceiptSchema.class {}
PurchaseReceiptSchema.setClass(PurchaseReceipt);
export class PurchaseReceiptLine extends PurchaseReceiptLineSchema.class {}
PurchaseReceiptLineSchema.setClass(PurchaseReceiptLine);
