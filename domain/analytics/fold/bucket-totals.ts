import type { SqlRun } from '../../shared/native-transaction.js';
import { BUCKET_SUMS, rollupSlot } from './activity-rollups.js';

/**
 * The supplier buckets summed over all suppliers, per day or month and slot (migration BucketTotals), for the
 * windows without a supplier filter (supplier-buckets.ts). The consumer merges each batch's day deltas into them
 * in its batch's slot (rollupSlot); the rebuild derives them from the supplier buckets in slot 0.
 */
const TOTAL_TABLES = [
  { table: 'analytics_total_day', key: 'day', bucket: 'day', from: 'analytics_supplier_day' },
  {
    table: 'analytics_total_month',
    key: 'month',
    bucket: "date_trunc('month', day)::date",
    from: 'analytics_supplier_month',
  },
];

export const BUCKET_TOTAL_TABLES = TOTAL_TABLES.map(t => t.table);

/** Upserts of the day and month totals from the day deltas in `source` (CTE-able), in key order. */
export const bucketTotalUpserts = (source: string): string[] =>
  TOTAL_TABLES.map(
    t => `
      insert into ${t.table} as t (${t.key}, slot, ${BUCKET_SUMS.join(', ')})
      select ${t.bucket}, ${rollupSlot('item_id')}, ${BUCKET_SUMS.map(c => `sum(${c})`).join(', ')}
      from ${source} group by 1, 2 order by 1, 2
      on conflict (${t.key}, slot) do update set
      ${BUCKET_SUMS.map(c => `${c} = t.${c} + excluded.${c}`).join(', ')}`,
  );

/**
 * The rebuild's derivation of the totals from the (complete) supplier buckets, in slot 0; `table(rollup)` names
 * the table a rollup is rebuilt in.
 */
export async function deriveBucketTotals(sql: SqlRun, table: (rollup: string) => string): Promise<void> {
  for (const t of TOTAL_TABLES)
    await sql(
      `insert into ${table(t.table)} (${t.key}, slot, ${BUCKET_SUMS.join(', ')})
       select ${t.key}, 0, ${BUCKET_SUMS.map(c => `sum(${c})`).join(', ')} from ${table(t.from)}
       group by 1 order by 1`,
    );
}
