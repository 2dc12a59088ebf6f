import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlPart } from '../../shared/sql.js';
import { supplierBuckets } from './supplier-buckets.js';

export interface MonthlyMovement {
  month: string;
  stockIn: number;
  stockOut: number;
}

/** Monthly stock movement as SQL over the supplier buckets (months and ragged-end days), one row per month with entries. */
export function monthlyStockMovementQuery(
  range: { start: string; end: string },
  supplierId: string | null,
): SqlPart {
  const buckets = supplierBuckets(['entries', 'qty_in', 'qty_out'], range, supplierId);
  return {
    sql: `select to_char(period, 'YYYY-MM') as month, sum(qty_in) as stock_in, sum(qty_out) as stock_out
          from (${buckets.sql}) b where entries > 0 group by 1 order by 1`,
    params: buckets.params,
  };
}

export const toMonthlyMovement = (r: any): MonthlyMovement => ({
  month: r.month,
  stockIn: Number(r.stock_in),
  stockOut: Number(r.stock_out),
});

/** Monthly stock movement: per month with entries: stockIn = sum of positive changes, stockOut = sum of |negative changes|. */
export async function monthlyStockMovement(
  em: EntityManager,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<MonthlyMovement[]> {
  const q = monthlyStockMovementQuery(range, supplierId);
  return (await em.execute<any[]>(q.sql, q.params)).map(toMonthlyMovement);
}
