import type { EntityManager } from '@mikro-orm/postgresql';

export interface ReasonTotals {
  reason: string;
  increase: number;
  decrease: number;
}

export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, m => `\\${m}`)}%`;

/** X1: per reason with entries in the range: the sum of increases and of |decreases|. */
export async function reasonBreakdown(
  em: EntityManager,
  range: { start: string; end: string },
  filter: { supplierId: string | null; itemName: string | null },
): Promise<ReasonTotals[]> {
  const rows = await em.execute<any[]>(
    `select reason, sum(increase) as inc, sum(decrease) as dec
     from analytics_reason_day
     where day between ?::date and ?::date and (?::uuid is null or supplier_key = ?::uuid)
       and (?::text is null or item_name ilike ?::text)
     group by reason order by reason collate "C"`,
    [
      range.start,
      range.end,
      filter.supplierId,
      filter.supplierId,
      filter.itemName,
      filter.itemName === null ? null : likePattern(filter.itemName),
    ],
  );
  return rows.map(r => ({ reason: r.reason, increase: Number(r.inc), decrease: Number(r.dec) }));
}
