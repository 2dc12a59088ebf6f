import type { CsvColumn } from '../shared/csv-cells.js';
import {
  decimalCellSql,
  leadingTimestampColumn,
  textCellSql,
  type CsvCopyColumn,
} from '../shared/csv-copy.js';
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
 * The same columns as PostgreSQL writes them (copyCsvSql over `stock_history h`): the cells toHistoryView and
 * the writer make of each. The timestamp (digits first) and the uuid never start with a character the writer
 * escapes; integers print alike; the price is the JSON number of its numeric.
 */
export const HISTORY_CSV_COPY_COLUMNS: CsvCopyColumn[] = [
  leadingTimestampColumn('timestamp', 'h."timestamp"'),
  { header: 'itemId', sql: 'h.item_id' },
  { header: 'itemName', sql: textCellSql('h.item_name') },
  { header: 'supplierName', sql: textCellSql('h.supplier_name') },
  { header: 'change', sql: 'h.change' },
  { header: 'quantityBefore', sql: 'h.quantity_before' },
  { header: 'quantityAfter', sql: 'h.quantity_after' },
  { header: 'reason', sql: textCellSql('h.reason') },
  { header: 'priceAtChange', sql: decimalCellSql('h.price_at_change') },
  { header: 'createdBy', sql: textCellSql('h.created_by') },
];
