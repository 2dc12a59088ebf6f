import type { CsvColumn } from '../shared/csv-cells.js';
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
