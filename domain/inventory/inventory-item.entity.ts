import { defineEntity, p } from '@mikro-orm/postgresql';
import { SupplierSchema } from '../suppliers/supplier.entity.js';
import { statementTime } from '../shared/database-time.js';

/**
 * An inventory item (table `inventory_item`). The database guarantees quantity >= 0, price >= 0.01, unique
 * lower(name) and lower(sku), on_order_quantity >= 0, and RESTRICT on supplier delete. Creation, update, rename,
 * price change and deletion go through the unit of work with the row locked; stock adjustments never do: they
 * are guarded atomic updates (see adjust-quantity.ts), so there is no read-modify-write race.
 */
export const InventoryItemSchema = defineEntity({
  name: 'InventoryItem',
  tableName: 'inventory_item',
  properties: {
    id: p.uuid().primary().defaultRaw('gen_random_uuid()'),
    name: p.string().length(255),
    sku: p.string().length(64).nullable(),
    quantity: p.integer(),
    price: p.decimal('string').precision(12).scale(2),
    minimumQuantity: p.integer().default(0),
    /** What ORDERED and PARTIALLY_RECEIVED orders still bring (migration Purchasing); changed only by SQL in the
     * order, receipt and cancel transactions, never through the entity. */
    onOrderQuantity: p.integer().default(0),
    /** Own replenishment levels (null = computed); when both are set, orderUpToQuantity > reorderPoint. */
    reorderPoint: p.integer().nullable(),
    orderUpToQuantity: p.integer().nullable(),
    /** The last replenishment run's terms of the item's due threshold and order-by date (migration
     * ReplenishmentDue; null when the run saw no demand); written only by the run's set-based SQL. */
    replenishmentWindowDays: p.integer().nullable(),
    replenishmentWindowDemand: p.bigint('number').nullable(),
    replenishmentLeadDays: p.integer().nullable(),
    replenishmentReorderPoint: p.bigint('number').nullable(),
    supplier: () =>
      p.manyToOne(SupplierSchema).deleteRule('restrict').foreignKeyName('inventory_item_supplier_id_fkey'),
    createdBy: p.string().length(320),
    /** Stamped by PostgreSQL (statementTime): a change's item-change record and stock events take updated_at. */
    createdAt: p.datetime().defaultRaw('now()').onCreate(statementTime),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(statementTime).onUpdate(statementTime),
    version: p.integer().default(1),
  },
});

export class InventoryItem extends InventoryItemSchema.class {}
InventoryItemSchema.setClass(InventoryItem);
