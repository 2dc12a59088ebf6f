import type { CsvColumn } from '../shared/csv-cells.js';
import type { CsvCopyColumn } from '../shared/csv-copy.js';
import type { StockHistoryView } from './stock-history.view.js';

/** Columns of the history export (a ledger: one line per entry). */
export const HISTORY_CSV_COLUMNS: CsvColumn<StockHistoryView>[] = [
  { header: 'timestamp', key: 'timestamp' },
  { header: 'itemId', key: 'itemId' },
  { header: 'itemName', key: 'itemName' },
  { header: 'supplierName', key: 'supplierName' },
  { header: 'change', key: 'change' },
  { header: 'quantityBefore', key: 'quantityBefore' },
  { header: 'quantityAfter', key: 'quantityAfter' },
  { header: 'reason', key: 'reason' },
  { header: 'priceAtChange', key: 'priceAtChange' },
  { header: 'createdBy', key: 'createdBy' },
];

/**
 * The same columns as COPY reads them from `stock_history h` (copyCsvSql), with the kind of cell toHistoryView
 * and the writer make of each (CsvCopyOut finishes them).
 */
export const HISTORY_CSV_COPY_COLUMNS: CsvCopyColumn[] = [
  { header: 'timestamp', sql: 'h."timestamp"', kind: 'timestamp' },
  { header: 'itemId', sql: 'h.item_id', kind: 'plain' },
  { header: 'itemName', sql: 'h.item_name', kind: 'text' },
  { header: 'supplierName', sql: 'h.supplier_name', kind: 'text' },
  { header: 'change', sql: 'h.change', kind: 'plain' },
  { header: 'quantityBefore', sql: 'h.quantity_before', kind: 'plain' },
  { header: 'quantityAfter', sql: 'h.quantity_after', kind: 'plain' },
  { header: 'reason', sql: 'h.reason', kind: 'text' },
  { header: 'priceAtChange', sql: 'h.price_at_change', kind: 'decimal' },
  { header: 'createdBy', sql: 'h.created_by', kind: 'text' },
];
