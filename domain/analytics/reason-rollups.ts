import type { SqlRun } from '../shared/native-transaction.js';
import { rollupSlot } from './activity-rollups.js';

/**
 * The reason totals that stay the same size however many items move on a day (migration
 * ReasonSupplierRollups): per (supplier, day, reason, slot) and per (day, reason, slot). The consumer merges each
 * batch's reason rows into them; the rebuild derives them from `analytics_reason_day`. The reason breakdown
 * reads them when it has no item-name filter.
 */
const REASON_TABLES = [
  { table: 'analytics_reason_supplier_day', key: ['supplier_key', 'day', 'reason', 'slot'] },
  { table: 'analytics_reason_total_day', key: ['day', 'reason', 'slot'] },
];

export const REASON_ROLLUP_TABLES = REASON_TABLES.map(t => t.table);

const SUMS = ['entries', 'increase', 'decrease'];

/**
 * Sums of `source` per key of `target`, in key order: `source` has the columns of `analytics_reason_day` (the
 * slot is its item's) or, with `slot` given, a slot column of its own.
 */
const reasonSums = ({ key }: (typeof REASON_TABLES)[number], source: string, slot = rollupSlot('item_id')) => `
  select ${key.map(c => (c === 'slot' ? slot : c)).join(', ')},
         ${SUMS.map(c => `sum(${c})`).join(', ')}
  from ${source} group by ${key.map((_, i) => i + 1).join(', ')} order by ${key.map((_, i) => i + 1).join(', ')}`;

/** Upserts of both reason rollups from the reason deltas in `source` (CTE-able), in key order. */
export const reasonRollupUpserts = (source: string): string[] =>
  REASON_TABLES.map(
    target => `
      insert into ${target.table} as t (${target.key.join(', ')}, ${SUMS.join(', ')})
      ${reasonSums(target, source)}
      on conflict (${target.key.join(', ')}) do update set
      ${SUMS.map(c => `${c} = t.${c} + excluded.${c}`).join(', ')}`,
  );

/**
 * The rebuild's derivation of both reason rollups from the (complete) `analytics_reason_day` rows: the
 * supplier rows from them, the all-supplier rows from the (fewer) supplier rows.
 */
export async function deriveReasonRollups(sql: SqlRun): Promise<void> {
  const [bySupplier, total] = REASON_TABLES;
  const insert = (target: (typeof REASON_TABLES)[number], sums: string) =>
    sql(`insert into ${target.table} (${target.key.join(', ')}, ${SUMS.join(', ')}) ${sums}`);
  await insert(bySupplier, reasonSums(bySupplier, 'analytics_reason_day'));
  await insert(total, reasonSums(total, bySupplier.table, 'slot'));
}
