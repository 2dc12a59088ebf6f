import { isoSql } from '../shared/sql.js';
import { numericToNumber } from '../shared/money.js';

/** The StockHistoryEntry record of the contract. */
export interface StockHistoryView {
  id: string;
  itemId: string;
  itemName: string;
  supplierId: string | null;
  supplierName: string | null;
  change: number;
  quantityBefore: number;
  quantityAfter: number;
  reason: string;
  priceAtChange: number;
  createdBy: string;
  timestamp: string;
  /** Ledger: the entry this one reverses, the entry that reversed this one (from the link row), a note. */
  reversalOf: string | null;
  reversedBy: string | null;
  note: string | null;
  /** A receipt's entry: the cost per unit it brought in, and its purchase order (else null). */
  unitCost: number | null;
  purchaseOrderId: string | null;
}

export const HISTORY_COLUMNS = `h.id::text as id, h.item_id as "itemId", h.item_name as "itemName",
  h.supplier_id as "supplierId", h.supplier_name as "supplierName", h.change,
  h.quantity_before as "quantityBefore", h.quantity_after as "quantityAfter", h.reason,
  h.price_at_change::text as "priceAtChange", h.created_by as "createdBy", ${isoSql('h."timestamp"')} as "timestamp",
  h.reversal_of::text as "reversalOf",
  (select r.reversal_entry_id::text from stock_reversal r where r.original_id = h.id) as "reversedBy", h.note,
  case when h.purchase_order_id is not null then h.unit_cost::text end as "unitCost",
  h.purchase_order_id as "purchaseOrderId"`;

export const toHistoryView = (row: StockHistoryView): StockHistoryView => ({
  ...row,
  change: Number(row.change),
  quantityBefore: Number(row.quantityBefore),
  quantityAfter: Number(row.quantityAfter),
  priceAtChange: numericToNumber(row.priceAtChange),
  unitCost: row.unitCost === null ? null : Number(row.unitCost),
});
