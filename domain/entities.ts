import { ProductSchema } from './catalog/product.entity.js';
import { UserSchema } from './users/user.entity.js';
import { SupplierSchema } from './suppliers/supplier.entity.js';
import { InventoryItemSchema } from './inventory/inventory-item.entity.js';
import { StockHistoryEntrySchema } from './stock-history/stock-history-entry.entity.js';
import { OutboxEventSchema } from './outbox/outbox-event.entity.js';
import { PurchaseOrderLineSchema, PurchaseOrderSchema } from './purchasing/purchase-order.entity.js';
import { PurchaseReceiptLineSchema, PurchaseReceiptSchema } from './purchasing/purchase-receipt.entity.js';

/** Every entity MikroORM knows about, listed explicitly (no folder discovery). */
export const ENTITIES = [
  UserSchema,
  ProductSchema,
  SupplierSchema,
  InventoryItemSchema,
  StockHistoryEntrySchema,
  OutboxEventSchema,
  PurchaseOrderSchema,
  PurchaseOrderLineSchema,
  PurchaseReceiptSchema,
  PurchaseReceiptLineSchema,
] as const;
