import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlPart } from '../../shared/sql.js';

export interface ItemUpdateCount {
  itemId: string;
  itemName: string;
  updateCount: number;
}

export interface UpdateFrequencyFilter {
  supplierId: string | null;
  start?: string;
  end?: string;
  limit?: number;
}

/**
 * Item update frequency (and the summary's top items) as SQL: history entries per item, desc (then name, id); the name is the one
 * of the item's latest entry in scope. Per (item, supplier) pair the entries up to `end` are the pair's total
 * (or, for a window ending before the pair's last day, the running count of its last day row up to `end`), minus
 * the running count before `start` when the pair began earlier: at most two index look-ups per pair, whatever
 * the window's length or the number of events in it.
 */
export function itemUpdateFrequencyQuery(filter: UpdateFrequencyFilter): SqlPart {
  const start = filter.start ?? null;
  const end = filter.end ?? null;
  const sid = filter.supplierId;
  return {
    sql: `select item_id, n, name from (
      select item_id, sum(hi - lo) as n, (array_agg(name order by day desc, ev desc))[1] as name
      from (
        select p.item_id, h.cum as hi, h.name, h.day, h.ev,
               case when ?::date is null or p.first_day >= ?::date then 0
                    else (select r.cum_entries from analytics_item_day r
                          where r.item_id = p.item_id and r.supplier_key = p.supplier_key and r.day < ?::date
                          order by r.day desc limit 1) end as lo
        from analytics_item_supplier p
        cross join lateral (
          select p.entries as cum, p.item_name as name, p.last_day as day, p.last_event_id as ev
          where ?::date is null or p.last_day <= ?::date
          union all
          (select r.cum_entries, r.item_name, r.day, r.last_event_id from analytics_item_day r
           where p.last_day > ?::date and r.item_id = p.item_id and r.supplier_key = p.supplier_key
             and r.day <= ?::date
           order by r.day desc limit 1)) h
        where (?::uuid is null or p.supplier_key = ?::uuid)
          and (?::date is null or p.last_day >= ?::date) and (?::date is null or p.first_day <= ?::date)
          and (?::date is null or h.day >= ?::date)
      ) y group by item_id) x
      order by n desc, name collate "C", item_id
      ${filter.limit === undefined ? '' : `limit ${Math.trunc(filter.limit)}`}`,
    params: [start, start, start, end, end, end, end, sid, sid, start, start, end, end, start, start],
  };
}

export const toItemUpdateCount = (r: any): ItemUpdateCount => ({
  itemId: r.item_id,
  itemName: r.name,
  updateCount: Number(r.n),
});

/** Item update frequency (and the summary's top items); optional day range and supplier filter; reads rollup rows only. */
export async function itemUpdateFrequency(
  em: EntityManager,
  filter: UpdateFrequencyFilter,
): Promise<ItemUpdateCount[]> {
  const q = itemUpdateFrequencyQuery(filter);
  return (await em.execute<any[]>(q.sql, q.params)).map(toItemUpdateCount);
}
