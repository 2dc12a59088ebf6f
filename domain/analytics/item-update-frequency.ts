import type { EntityManager } from '@mikro-orm/postgresql';

export interface ItemUpdateCount {
  itemId: string;
  itemName: string;
  updateCount: number;
}

/**
 * N4 (and the summary's top items): history entries per item, desc (then name, id). The name is the one of the
 * item's latest entry in scope. Optional day range and supplier filter; reads rollup rows only.
 */
export async function itemUpdateFrequency(
  em: EntityManager,
  filter: { supplierId: string | null; start?: string; end?: string; limit?: number },
): Promise<ItemUpdateCount[]> {
  const rows = await em.execute<any[]>(
    `select * from (
     select item_id, sum(entries) as n,
            (array_agg(item_name order by day desc, last_event_id desc))[1] as name
     from analytics_item_day
     where (?::uuid is null or supplier_key = ?::uuid)
       and (?::date is null or day >= ?::date) and (?::date is null or day <= ?::date)
     group by item_id) x
     order by n desc, name collate "C", item_id
     ${filter.limit === undefined ? '' : `limit ${Math.trunc(filter.limit)}`}`,
    [
      filter.supplierId,
      filter.supplierId,
      filter.start ?? null,
      filter.start ?? null,
      filter.end ?? null,
      filter.end ?? null,
    ],
  );
  return rows.map(r => ({ itemId: r.item_id, itemName: r.name, updateCount: Number(r.n) }));
}
