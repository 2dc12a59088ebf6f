import type { EntityManager } from '@mikro-orm/postgresql';

export interface MonthlyMovement {
  month: string;
  stockIn: number;
  stockOut: number;
}

/** N6: per month with entries: stockIn = sum of positive changes, stockOut = sum of |negative changes|. */
export async function monthlyStockMovement(
  em: EntityManager,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<MonthlyMovement[]> {
  const rows = await em.execute<any[]>(
    `select to_char(day, 'YYYY-MM') as month, sum(qty_in) as stock_in, sum(qty_out) as stock_out
     from analytics_item_day
     where day between ?::date and ?::date and (?::uuid is null or supplier_key = ?::uuid)
     group by 1 order by 1`,
    [range.start, range.end, supplierId, supplierId],
  );
  return rows.map(r => ({ month: r.month, stockIn: Number(r.stock_in), stockOut: Number(r.stock_out) }));
}
