import type { SqlRun } from '../../shared/native-transaction.js';
import { byKey } from '../../shared/sql.js';

/**
 * The activity rollups that stay the same size however busy an item is (see the DashboardRollups migration):
 * per-supplier day and month buckets, the (item, supplier) pair totals and the running entry count on each
 * item-day row. The consumer merges each fold into them; the rebuild derives them from the item-day rows.
 */

/** The WAC buckets' quantity and cost columns of `analytics_item_day` and the supplier buckets, in order. */
export const WAC_BUCKET_COLUMNS = [
  'purchases_qty',
  'purchases_cost',
  'returns_in_qty',
  'returns_in_cost',
  'cogs_qty',
  'cogs_cost',
  'write_off_qty',
  'write_off_cost',
];

/** Additive columns shared by `analytics_item_day` and the supplier buckets. */
export const BUCKET_SUMS = ['entries', 'qty_in', 'qty_out', ...WAC_BUCKET_COLUMNS];

const SUPPLIER_TABLES = [
  { table: 'analytics_supplier_day', key: 'day', bucket: 'day' },
  { table: 'analytics_supplier_month', key: 'month', bucket: "date_trunc('month', day)::date" },
];

/**
 * Adds day deltas (the rows of the relation `batch`, with `analytics_item_day` columns, whose own rows the same
 * statement upserts with their own counts) to the running counts of the pair's stored LATER rows that are not among them.
 * Later days exist only when events arrive out of day order, so in practice this finds nothing to update. The
 * stored rows are looked up per delta row (byKey: joined, they were planned as a hash join over a sequential
 * scan of the whole table for every batch) and updated by their address (`ctid`, a TID scan): joined by key, the
 * held run's generic plan (consumerPool) drove the update from a scan of the whole pair index, a cost that
 * grew with the table. Only the consumer, on the
 * partitions it holds, and the rebuild, which excludes it, write these rows, so an address read in the
 * statement's snapshot is still the row's.
 */
export const runningCountsUpdate = (batch: string) => `
  update analytics_item_day t set cum_entries = t.cum_entries + d.added
  from (select r.tid, sum(x.entries) as added
        from ${batch} x
        cross join lateral ${byKey(`select r.ctid as tid, r.item_id, r.supplier_key, r.day from analytics_item_day r
                                     where r.item_id = x.item_id and r.supplier_key = x.supplier_key and r.day > x.day`)} r
        where not exists (select 1 from ${batch} y
                           where y.item_id = r.item_id and y.supplier_key = r.supplier_key and y.day = r.day)
        group by 1) d
  where t.ctid = d.tid`;

const PAIR_COLUMNS = 'item_id, supplier_key, first_day, last_day, entries, item_name, last_event_id';

/** Pair totals aggregated from day rows of `source` (the consumer's deltas or the rebuilt item-day rows). */
const pairTotals = (source: string) => `
  select item_id, supplier_key, min(day), max(day), sum(entries),
         (array_agg(item_name order by day desc, last_event_id desc))[1],
         (array_agg(last_event_id order by day desc, last_event_id desc))[1]
  from ${source} group by 1, 2 order by 1, 2`;

/**
 * The slot of the shared rollup rows (supplier buckets, reason totals, user days, totals) a batch adds to: the
 * smallest outbox partition (as `outbox_event.part`) among its items, which is one of the partitions its run
 * holds, so two consumer runs, which hold different partitions, never write the same row (migration
 * RollupSlots). One slot per batch, not one per item: a batch over the events of many partitions (a consumer
 * that keeps up takes every partition with pending events) adds to one row per key instead of one per
 * partition. Readers sum over the slots. It reads the CTE `batch_slot` (batchSlotCte) of the same statement;
 * an item's own partition when the batch has no day rows.
 */
export const rollupSlot = (itemId: string) =>
  `coalesce((select slot from batch_slot), (hashtext(${itemId}::text) & 15)::smallint)`;

/** The CTE rollupSlot reads: the slot of the batch whose day rows are `source` (rows with an `item_id`). */
export const batchSlotCte = (source: string) =>
  `batch_slot as materialized (select min(hashtext(item_id::text) & 15)::smallint as slot from ${source})`;

/** Supplier bucket sums of one supplier table per slot, aggregated from day rows of `source`, in key order. */
const bucketSums = ({ bucket }: (typeof SUPPLIER_TABLES)[number], source: string) => `
  select ${bucket}, supplier_key, ${rollupSlot('item_id')}, ${BUCKET_SUMS.map(c => `sum(${c})`).join(', ')}
  from ${source} group by 1, 2, 3 order by 1, 2, 3`;

/** Upsert of the (item, supplier) pair totals from the day deltas in `source` (one statement, CTE-able). */
export const pairTotalsUpsert = (source: string) => `
  insert into analytics_item_supplier as t (${PAIR_COLUMNS})
  ${pairTotals(source)}
  on conflict (item_id, supplier_key) do update set
    first_day = least(t.first_day, excluded.first_day),
    last_day = greatest(t.last_day, excluded.last_day),
    entries = t.entries + excluded.entries,
    item_name = case when (excluded.last_day, excluded.last_event_id) >= (t.last_day, t.last_event_id)
                then excluded.item_name else t.item_name end,
    last_event_id = case when (excluded.last_day, excluded.last_event_id) >= (t.last_day, t.last_event_id)
                    then excluded.last_event_id else t.last_event_id end`;

/** Upserts of the supplier day and month buckets from the day deltas in `source` (CTE-able), in key order. */
export const supplierBucketUpserts = (source: string): string[] =>
  SUPPLIER_TABLES.map(
    target => `
      insert into ${target.table} as t (${target.key}, supplier_key, slot, ${BUCKET_SUMS.join(', ')})
      ${bucketSums(target, source)}
      on conflict (${target.key}, supplier_key, slot) do update set
      ${BUCKET_SUMS.map(c => `${c} = t.${c} + excluded.${c}`).join(', ')}`,
  );

/** The supplier buckets per day (written by the rebuild's fold) and per month. */
export const [SUPPLIER_DAY_ROLLUP, SUPPLIER_MONTH_ROLLUP] = SUPPLIER_TABLES.map(t => t.table);

/**
 * The rebuild's derivation of the month buckets from the (complete) day buckets, in slot 0 (readers sum over
 * the slots); `table(rollup)` names the table a rollup is rebuilt in.
 */
export async function deriveSupplierMonths(sql: SqlRun, table: (rollup: string) => string): Promise<void> {
  const [day, month] = SUPPLIER_TABLES;
  await sql(
    `insert into ${table(month.table)} (${month.key}, supplier_key, slot, ${BUCKET_SUMS.join(', ')})
     select ${month.bucket}, supplier_key, 0, ${BUCKET_SUMS.map(c => `sum(${c})`).join(', ')}
     from ${table(day.table)} group by 1, 2 order by 1, 2`,
  );
}
