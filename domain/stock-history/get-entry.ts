import { NotFoundError } from '../shared/errors.js';
import { dbQuery, type Db } from '../shared/pool-query.js';
import { HISTORY_COLUMNS, toHistoryView, type StockHistoryView } from './stock-history.view.js';
import { isEntryId } from './reverse-entry.js';

/** GET /api/stock-history/{id}: one entry (404 also while a reversal's entry is not written yet). */
export async function getHistoryEntry(db: Db, id: string): Promise<StockHistoryView> {
  const rows = isEntryId(id)
    ? await dbQuery<StockHistoryView>(db, `select ${HISTORY_COLUMNS} from stock_history h where h.id = ?`, [
        id,
      ])
    : [];
  if (rows.length === 0) throw new NotFoundError('stock.history.entry.not.found');
  return toHistoryView(rows[0]);
}
