import { isoSql } from '../shared/sql.js';
import { numericToNumber, totalValueOf } from '../shared/money.js';
import type { InventoryItem } from './inventory-item.entity.js';

/**
 * The InventoryItem record of the contract. `SupplierName` is null only as of an instant whose supplier has
 * since been deleted (item-as-of.ts).
 */
export interface ItemView<SupplierName extends string | null = string> {
  id: string;
  name: string;
  sku: string | null;
  quantity: number;
  price: number;
  totalValue: number;
  supplierId: string;
  supplierName: SupplierName;
  minimumQuantity: number;
  /** What ORDERED and PARTIALLY_RECEIVED orders still bring (read-only). */
  onOrderQuantity: number;
  /** Own replenishment levels; null = computed. */
  reorderPoint: number | null;
  orderUpToQuantity: number | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}

/** What only the item of now has: an as-of read leaves these out. */
export type PresentOnly = 'onOrderQuantity' | 'createdBy' | 'createdAt' | 'updatedAt';

/** Raw row of ITEM_COLUMNS (numeric as text, timestamps already ISO). */
export interface ItemRow<SupplierName extends string | null = string> {
  id: string;
  name: string;
  sku: string | null;
  quantity: number;
  price: string;
  total_value: string;
  supplier_id: string;
  supplier_name: SupplierName;
  minimum_quantity: number;
  on_order_quantity: number;
  reorder_point: number | null;
  order_up_to_quantity: number | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** Columns of an item joined with its supplier (`i` = inventory_item, `s` = supplier). */
export const ITEM_COLUMNS = `i.id, i.name, i.sku, i.quantity, i.price::text as price,
  (i.quantity * i.price)::text as total_value, i.supplier_id, s.name as supplier_name, i.minimum_quantity,
  i.on_order_quantity, i.reorder_point, i.order_up_to_quantity, i.created_by, ${isoSql('i.created_at')} as created_at, ${isoSql('i.updated_at')} as updated_at, i.version`;

export const ITEM_FROM = 'inventory_item i join supplier s on s.id = i.supplier_id';

export function toItemView<SupplierName extends string | null = string>(
  row: ItemRow<SupplierName>,
): ItemView<SupplierName> {
  return {
    id: row.id,
    name: row.name,
    sku: row.sku,
    quantity: Number(row.quantity),
    price: numericToNumber(row.price),
    totalValue: numericToNumber(row.total_value),
    supplierId: row.supplier_id,
    supplierName: row.supplier_name,
    minimumQuantity: Number(row.minimum_quantity),
    onOrderQuantity: Number(row.on_order_quantity),
    reorderPoint: row.reorder_point === null ? null : Number(row.reorder_point),
    orderUpToQuantity: row.order_up_to_quantity === null ? null : Number(row.order_up_to_quantity),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: Number(row.version),
  };
}

/** The record of an item of the unit of work (its supplier loaded), as toItemView maps the same row read by SQL. */
export function itemViewOf(item: InventoryItem): ItemView {
  return {
    id: item.id,
    name: item.name,
    sku: item.sku ?? null,
    quantity: item.quantity,
    price: numericToNumber(item.price),
    totalValue: totalValueOf(item.price, item.quantity),
    supplierId: item.supplier.id,
    supplierName: item.supplier.name,
    minimumQuantity: item.minimumQuantity,
    onOrderQuantity: item.onOrderQuantity,
    reorderPoint: item.reorderPoint ?? null,
    orderUpToQuantity: item.orderUpToQuantity ?? null,
    createdBy: item.createdBy,
    createdAt: item.createdAt.toISOString(),
    updatedAt: item.updatedAt.toISOString(),
    version: item.version,
  };
}
