import { defineEntity, p } from '@mikro-orm/postgresql';
import { SupplierSchema } from '../suppliers/supplier.entity.js';

export const ORDER_STATUSES = ['DRAFT', 'ORDERED', 'PARTIALLY_RECEIVED', 'RECEIVED', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
/** The states whose open quantity is counted in the items' `onOrderQuantity`. */
export const OPEN_ORDER_STATUSES: readonly OrderStatus[] = ['ORDERED', 'PARTIALLY_RECEIVED'];

/**
 * A purchase order (table `purchase_order`, migration Purchasing). `number` is `PO-` and at least 6 digits from
 * the sequence `purchase_order_number_seq`; `totalCost` is the sum of the lines' totals, kept with them.
 * `version` counts every change of the order (the ETag).
 */
export const PurchaseOrderSchema = defineEntity({
  name: 'PurchaseOrder',
  tableName: 'purchase_order',
  properties: {
    id: p.uuid().primary().defaultRaw('gen_random_uuid()'),
    number: p.string().length(24).unique('purchase_order_number_key'),
    supplier: () =>
      p.manyToOne(SupplierSchema).deleteRule('restrict').foreignKeyName('purchase_order_supplier_id_fkey'),
    status: p.string().length(20).default('DRAFT').$type<OrderStatus>(),
    note: p.string().length(500).nullable(),
    expectedAt: p.string().columnType('date').nullable(),
    totalCost: p.decimal('string').precision(14).scale(2).defaultRaw('0'),
    createdBy: p.string().length(320),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    orderedAt: p.datetime().nullable(),
    receivedAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    version: p.integer().default(1),
    lines: () =>
      p.oneToMany(PurchaseOrderLineSchema).mappedBy('purchaseOrder').orphanRemoval().orderBy({ id: 'asc' }),
  },
});

/**
 * One line of an order (table `purchase_order_line`): one per item. `itemName` and `sku` are as captured when
 * the line was written; `item` is a plain id (no foreign key: a DRAFT keeps a line whose item was deleted).
 * The database keeps 0 <= quantityReceived <= quantityOrdered.
 */
export const PurchaseOrderLineSchema = defineEntity({
  name: 'PurchaseOrderLine',
  tableName: 'purchase_order_line',
  uniques: [
    { name: 'purchase_order_line_purchase_order_id_item_id_key', properties: ['purchaseOrder', 'itemId'] },
  ],
  properties: {
    id: p.bigint('string').primary().autoincrement().generated('identity'),
    purchaseOrder: () =>
      p
        .manyToOne(PurchaseOrderSchema)
        .deleteRule('cascade')
        .foreignKeyName('purchase_order_line_purchase_order_id_fkey'),
    itemId: p.uuid(),
    itemName: p.string().length(255),
    sku: p.string().length(64).nullable(),
    quantityOrdered: p.integer(),
    quantityReceived: p.integer().default(0),
    unitCost: p.decimal('string').precision(12).scale(2),
  },
});

export class PurchaseOrder extends PurchaseOrderSchema.class {}
PurchaseOrderSchema.setClass(PurchaseOrder);
export class PurchaseOrderLine extends PurchaseOrderLineSchema.class {}
PurchaseOrderLineSchema.setClass(PurchaseOrderLine);
