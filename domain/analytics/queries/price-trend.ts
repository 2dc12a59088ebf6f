import type { EntityManager } from '@mikro-orm/postgresql';
import { numericToNumber } from '../../shared/money.js';

export interface PricePoint {
  timestamp: string;
  price: number;
}

/** The price trend: per day with entries of the item, the average priceAtChange (rounded half-up to cents). */
export async function priceTrend(
  em: EntityManager,
  itemId: string,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<PricePoint[]> {
  const rows = await em.execute<any[]>(
    `select to_char(day, 'YYYY-MM-DD') as d, round(sum(price_sum) / sum(entries), 2)::text as price
     from analytics_item_day
     where item_id = ?::uuid and day between ?::date and ?::date and (?::uuid is null or supplier_key = ?::uuid)
     group by day order by day`,
    [itemId, range.start, range.end, supplierId, supplierId],
  );
  return rows.map(r => ({ timestamp: r.d, price: numericToNumber(r.price) }));
}
