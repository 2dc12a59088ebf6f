import type { EntityManager } from '@mikro-orm/postgresql';
import { numericToNumber } from '../../shared/money.js';
import { latestDayRow } from './latest-day-row.js';

export interface StockValuePoint {
  date: string;
  totalValue: number;
}

/** Stock value over time answers one point per day, so its span is capped (contract: 400 beyond 3,660 days). */
export const MAX_STOCK_VALUE_DAYS = 3660;

/**
 * Stock value over time: one point per day: the sum over items of quantity x price at the end of that day (items that did not
 * move included). Reads, per item, its latest rollup row before the range, then the rows inside the range.
 */
export async function stockValueOverTime(
  em: EntityManager,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<StockValuePoint[]> {
  const value = `case when (?::uuid is null or r.supplier_key = ?::uuid)
                  then r.closing_quantity * r.closing_price else 0 end`;
  const rows = await em.execute<{ date: string; total: string }[]>(
    `with base as (
       select i.item_id, coalesce(b.v, 0) as v
       from analytics_item i
       left join lateral (${latestDayRow(`${value} as v`, 'i.item_id', '< ?::date')}) b on true
     ),
     latest as (
       select distinct on (r.item_id, r.day) r.item_id, r.day, ${value} as v
       from analytics_item_day r where r.day between ?::date and ?::date
       order by r.item_id, r.day, r.last_event_id desc
     ),
     deltas as (
       select l.day, l.v - coalesce(lag(l.v) over (partition by l.item_id order by l.day), b.v, 0) as d
       from latest l left join base b on b.item_id = l.item_id
     ),
     per_day as (select day, sum(d) as d from deltas group by day)
     select to_char(g.d, 'YYYY-MM-DD') as date,
            ((select coalesce(sum(v), 0) from base) + coalesce(sum(p.d) over (order by g.d), 0))::text as total
     from generate_series(?::date, ?::date, interval '1 day') g(d)
     left join per_day p on p.day = g.d::date
     order by g.d`,
    [
      supplierId,
      supplierId,
      range.start,
      supplierId,
      supplierId,
      range.start,
      range.end,
      range.start,
      range.end,
    ],
  );
  return rows.map(r => ({ date: r.date, totalValue: numericToNumber(r.total) }));
}
