import type { SqlRun } from '../../shared/native-transaction.js';
import { rollupSlot } from './activity-rollups.js';

/**
 * The reason totals that stay the same size however many items move on a day (migration
 * ReasonSupplierRollups): per (supplier, day, reason, slot) and per (day, reason, slot). The consumer merges each
 * batch's reason rows into them, in its batch's slot (rollupSlot); the rebuild writes them from its fold in
 * slot 0 (the consumer is excluded meanwhile, and readers sum over the slots). The reason breakdown reads them
 * when it has no item-name filter.
 */
const REASON_TABLES = [
  { table: 'analytics_reason_supplier_day', key: ['supplier_key', 'day', 'reason'] },
  { table: 'analytics_reason_total_day', key: ['day', 'reason'] },
];

export const REASON_ROLLUP_TABLES = REASON_TABLES.map(t => t.table);

const SUMS = ['entries', 'increase', 'decrease'];

/** Sums of `source` per key of `target` and slot (an expression over `source`), in key order. */
const reasonSums = ({ key }: (typeof REASON_TABLES)[number], source: string, slot: string) => `
  select ${key.join(', ')}, ${slot}, ${SUMS.map(c => `sum(${c})`).join(', ')}
  from ${source} group by ${key.map((_, i) => i + 1).join(', ')}, ${key.length + 1}
  order by ${key.map((_, i) => i + 1).join(', ')}, ${key.length + 1}`;

/** Upserts of both reason rollups from the reason deltas in `source` (CTE-able), in key order. */
export const reasonRollupUpserts = (source: string): string[] =>
  REASON_TABLES.map(
    target => `
      insert into ${target.table} as t (${target.key.join(', ')}, slot, ${SUMS.join(', ')})
      ${reasonSums(target, source, rollupSlot('item_id'))}
      on conflict (${target.key.join(', ')}, slot) do update set
      ${SUMS.map(c => `${c} = t.${c} + excluded.${c}`).join(', ')}`,
  );

/** The reason rollups' tables: the supplier rows (written by the rebuild's fold) and the totals. */
export const [REASON_SUPPLIER_ROLLUP, REASON_TOTAL_ROLLUP] = REASON_ROLLUP_TABLES;

/**
 * The rebuild's derivation of the all-supplier reason rows from the (complete) supplier rows, in slot 0
 * (`table(rollup)` names the table a rollup is rebuilt in).
 */
export async function deriveReasonTotals(sql: SqlRun, table: (rollup: string) => string): Promise<void> {
  const [bySupplier, total] = REASON_TABLES;
  await sql(
    `insert into ${table(total.table)} (${total.key.join(', ')}, slot, ${SUMS.join(', ')})
     ${reasonSums(total, table(bySupplier.table), '0')}`,
  );
}
