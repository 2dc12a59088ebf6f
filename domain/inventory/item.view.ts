import { isoSql } from '../shared/sql.js';
import { numericToNumber } from '../shared/money.js';

/** An item's own state: what the API shows of it now and as of a past instant (item-as-of.ts). */
export interface ItemState<SupplierName extends string | null = string> {
  id: string;
  name: string;
  sku: string | null;
  quantity: number;
  price: number;
  totalValue: number;
  supplierId: string;
  /** null only as of an instant whose supplier has since been deleted. */
  supplierName: SupplierName;
  minimumQuantity: number;
  /** Own replenishment levels; null = computed. */
  reorderPoint: number | null;
  orderUpToQuantity: number | null;
  version: number;
}

/** The InventoryItem record of the contract. */
export interface ItemView extends ItemState {
  /** What ORDERED and PARTIALLY_RECEIVED orders still bring (read-only). */
  onOrderQuantity: number;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** Raw row of ITEM_COLUMNS (numeric as text, timestamps already ISO). */
export interface ItemRow {
  id: string;
  name: string;
  sku: string | null;
  quantity: number;
  price: string;
  total_value: string;
  supplier_id: string;
  supplier_name: string;
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

/** The row columns of an item's state (numeric as text). */
export type ItemStateRow<SupplierName extends string | null = string> = Pick<
  ItemRow,
  | 'name'
  | 'sku'
  | 'quantity'
  | 'price'
  | 'total_value'
  | 'supplier_id'
  | 'minimum_quantity'
  | 'reorder_point'
  | 'order_up_to_quantity'
  | 'version'
> & { supplier_name: SupplierName };

export function toItemState<SupplierName extends string | null>(
  id: string,
  row: ItemStateRow<SupplierName>,
): ItemState<SupplierName> {
  return {
    id,
    name: row.name,
    sku: row.sku,
    quantity: Number(row.quantity),
    price: numericToNumber(row.price),
    totalValue: numericToNumber(row.total_value),
    supplierId: row.supplier_id,
    supplierName: row.supplier_name,
    minimumQuantity: Number(row.minimum_quantity),
    reorderPoint: row.reorder_point === null ? null : Number(row.reorder_point),
    orderUpToQuantity: row.order_up_to_quantity === null ? null : Number(row.order_up_to_quantity),
    version: Number(row.version),
  };
}

/** The item's state and what only its present has, in the contract's order of fields. */
export function toItemView(row: ItemRow): ItemView {
  const { reorderPoint, orderUpToQuantity, version, ...head } = toItemState(row.id, row);
  return {
    ...head,
    onOrderQuantity: Number(row.on_order_quantity),
    reorderPoint,
    orderUpToQuantity,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version,
  };
}
