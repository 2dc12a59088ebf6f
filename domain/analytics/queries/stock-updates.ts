import type { EntityManager } from '@mikro-orm/postgresql';
import { likePattern } from './reason-breakdown.js';
import { ValidationError } from '../../shared/errors.js';

export interface StockUpdateRow {
  itemId: string;
  itemName: string;
  supplierName: string | null;
  change: number;
  reason: string;
  createdBy: string;
  timestamp: string;
}

export interface StockUpdateFilter {
  from: Date;
  to: Date;
  toInclusive: boolean;
  itemName?: string | null;
  supplierId?: string | null;
  createdBy?: string | null;
  minChange?: number | null;
  maxChange?: number | null;
}

export const STOCK_UPDATES_LIMIT = 1000;

/** WHERE clause and parameters of a history listing (indexes: timestamp, supplier+timestamp). */
export function stockUpdateWhere(f: StockUpdateFilter): { sql: string; params: unknown[] } {
  const parts = ['"timestamp" >= ?', f.toInclusive ? '"timestamp" <= ?' : '"timestamp" < ?'];
  const params: unknown[] = [f.from.toISOString(), f.to.toISOString()];
  if (f.itemName) {
    parts.push('item_name ilike ?');
    params.push(likePattern(f.itemName));
  }
  if (f.supplierId) {
    parts.push('supplier_id = ?::uuid');
    params.push(f.supplierId);
  }
  if (f.createdBy) {
    parts.push('lower(created_by) = lower(?)');
    params.push(f.createdBy);
  }
  if (f.minChange !== undefined && f.minChange !== null) {
    parts.push('change >= ?');
    params.push(f.minChange);
  }
  if (f.maxChange !== undefined && f.maxChange !== null) {
    parts.push('change <= ?');
    params.push(f.maxChange);
  }
  return { sql: parts.join(' and '), params };
}

export const STOCK_UPDATE_COLUMNS = `item_id, item_name, supplier_name, change, reason, created_by,
  to_char("timestamp" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ts`;

export const toStockUpdateRow = (r: any): StockUpdateRow => ({
  itemId: r.item_id,
  itemName: r.item_name,
  supplierName: r.supplier_name ?? null,
  change: Number(r.change),
  reason: r.reason,
  createdBy: r.created_by,
  timestamp: r.ts,
});

/** The stock updates and the stock updates query: history entries matching the filter, newest first, at most 1000. */
export async function stockUpdates(em: EntityManager, filter: StockUpdateFilter): Promise<StockUpdateRow[]> {
  const { minChange, maxChange } = filter;
  if (minChange != null && maxChange != null && minChange > maxChange)
    throw new ValidationError('analytics.change.inverted');
  const where = stockUpdateWhere(filter);
  const rows = await em.execute<any[]>(
    `select ${STOCK_UPDATE_COLUMNS} from stock_history where ${where.sql}
     order by "timestamp" desc, outbox_event_id desc limit ${STOCK_UPDATES_LIMIT}`,
    where.params,
  );
  return rows.map(toStockUpdateRow);
}
