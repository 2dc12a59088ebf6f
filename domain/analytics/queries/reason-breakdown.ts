import type { EntityManager } from '@mikro-orm/postgresql';

export interface ReasonTotals {
  reason: string;
  increase: number;
  decrease: number;
}

export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, m => `\\${m}`)}%`;

/**
 * The reason breakdown: per reason with entries in the range: the sum of increases and of |decreases|. Without an item-name
 * filter it reads the reason totals per (day, reason, slot), of all suppliers or of one (reason-rollups.ts): a
 * bounded number of rows a day however many items moved; with one, the (item, day, reason) rows, whose names it
 * matches.
 */
export async function reasonBreakdown(
  em: EntityManager,
  range: { start: string; end: string },
  filter: { supplierId: string | null; itemName: string | null },
): Promise<ReasonTotals[]> {
  const totals = (from: string, where: string, params: unknown[]) =>
    em.execute<any[]>(
      `select reason, sum(increase) as inc, sum(decrease) as dec from ${from}
       where day between ?::date and ?::date ${where}
       group by reason order by reason collate "C"`,
      [range.start, range.end, ...params],
    );
  const rows =
    filter.itemName !== null
      ? await totals(
          'analytics_reason_day',
          'and (?::uuid is null or supplier_key = ?::uuid) and item_name ilike ?::text',
          [filter.supplierId, filter.supplierId, likePattern(filter.itemName)],
        )
      : filter.supplierId !== null
        ? await totals('analytics_reason_supplier_day', 'and supplier_key = ?::uuid', [filter.supplierId])
        : await totals('analytics_reason_total_day', '', []);
  return rows.map(r => ({ reason: r.reason, increase: Number(r.inc), decrease: Number(r.dec) }));
}
