import { formatUnits } from '../decimal.js';
import {
  BUCKET_SUMS,
  batchSlotCte,
  pairTotalsUpsert,
  rollupSlot,
  runningCountsUpdate,
  supplierBucketUpserts,
} from './activity-rollups.js';
import { reasonRollupUpserts } from './reason-rollups.js';
import { bucketTotalUpserts } from './bucket-totals.js';
import type { DayRow, FoldRows, ReasonRow, UserRow } from './fold-item-events.js';

const dayJson = (r: DayRow) => ({
  item_id: r.itemId,
  day: r.day,
  supplier_key: r.supplierKey,
  supplier_name: r.supplierName,
  item_name: r.itemName,
  entries: r.entries,
  qty_in: r.qtyIn,
  qty_out: r.qtyOut,
  price_sum: formatUnits(r.priceSum),
  closing_quantity: r.closingQuantity,
  closing_price: r.closingPrice,
  wac_q: r.wacQ,
  wac_c: formatUnits(r.wacC),
  purchases_qty: r.purchasesQty,
  purchases_cost: formatUnits(r.purchasesCost),
  returns_in_qty: r.returnsInQty,
  returns_in_cost: formatUnits(r.returnsInCost),
  cogs_qty: r.cogsQty,
  cogs_cost: formatUnits(r.cogsCost),
  write_off_qty: r.writeOffQty,
  write_off_cost: formatUnits(r.writeOffCost),
  last_event_id: r.lastEventId,
});

const reasonJson = (r: ReasonRow) => ({
  item_id: r.itemId,
  day: r.day,
  supplier_key: r.supplierKey,
  reason: r.reason,
  item_name: r.itemName,
  entries: r.entries,
  increase: r.increase,
  decrease: r.decrease,
});

const userJson = (r: UserRow) => ({
  item_id: r.itemId,
  day: r.day,
  supplier_key: r.supplierKey,
  created_by: r.createdBy,
  entries: r.entries,
});

/** The day row's additive columns, and those that follow its latest event. */
export const DAY_SUMS = [...BUCKET_SUMS, 'price_sum'];
const LATEST = [
  'supplier_name',
  'item_name',
  'closing_quantity',
  'closing_price',
  'wac_q',
  'wac_c',
  'last_event_id',
];

const DAY_COLUMNS = `item_id uuid, day date, supplier_key uuid, supplier_name varchar, item_name varchar,
  entries int, qty_in bigint, qty_out bigint, price_sum numeric, closing_quantity int, closing_price numeric,
  wac_q int, wac_c numeric, purchases_qty bigint, purchases_cost numeric, returns_in_qty bigint,
  returns_in_cost numeric, cogs_qty bigint, cogs_cost numeric, write_off_qty bigint, write_off_cost numeric,
  last_event_id bigint`;
const DAY_NAMES = DAY_COLUMNS.split(',').map(c => c.trim().split(/\s+/)[0]);

/** Day rows sent as a JSON parameter, read back as `x` with the columns of `analytics_item_day`. */
const dayRows = (param: string) => `jsonb_to_recordset(${param}::jsonb) as x(${DAY_COLUMNS})`;

/** An item's running state after its fold, as ITEM_STATE_UPSERT reads it. */
export interface ItemStateJson {
  item_id: string;
  wac_q: number;
  wac_c: string;
  last_event_id: string;
}

/**
 * The consumer's whole write of a batch as ONE statement (one round trip, and its own transaction when it runs
 * alone): the fold deltas merged into every rollup (sums add up; the "latest" fields follow the later event) and
 * the consumer's markers set on the batch's events (`markers`: CTEs ending in `marked`, and a select-list
 * check that fails the statement unless every event was marked; the markers are the consumer's own progress
 * rows, which no other consumer writes). `tail` is more of the final select list (the commit mode). The writes
 * are data-modifying CTEs that the final select does not read: PostgreSQL runs each of them to completion all
 * the same, so none returns rows or is counted (a RETURNING list, a CTE scan and an aggregate each, set up and
 * run for every batch, for a figure nobody read).
 *
 * Running entry counts (`cum_entries`, the running sum of a pair's entries by day) in one statement, where no
 * part may update a row another part writes: a batch row gets the pair's batch entries up to its day
 * (`batch_cum`) on top of the stored count before its day (a new row: the stored row before it; an existing
 * one: its own count less its own entries, the same thing), and the pair's stored LATER rows that the batch does
 * not write get the batch's earlier entries (runningCountsUpdate; later days exist only when events arrive out
 * of day order). Each part reads the statement's snapshot, taken before any of them writes.
 */
export function foldWritesSql(markers: string, check: string, tail = ''): string {
  const parts = [
    `x as materialized (select x.*, sum(x.entries) over (partition by x.item_id, x.supplier_key order by x.day)
                          as batch_cum from ${dayRows('$1')})`,
    batchSlotCte('x'),
    `d as (insert into analytics_item_day (${DAY_NAMES.join(', ')}, cum_entries)
     select ${DAY_NAMES.map(c => `x.${c}`).join(', ')},
            x.batch_cum + coalesce((select p.cum_entries from analytics_item_day p
                      where p.item_id = x.item_id and p.supplier_key = x.supplier_key and p.day < x.day
                      order by p.day desc limit 1), 0)
     from x order by x.item_id, x.day, x.supplier_key
     on conflict (item_id, day, supplier_key) do update set
     cum_entries = excluded.cum_entries + analytics_item_day.entries,
     ${DAY_SUMS.map(c => `${c} = analytics_item_day.${c} + excluded.${c}`).join(', ')},
     ${LATEST.map(
       c =>
         `${c} = case when excluded.last_event_id >= analytics_item_day.last_event_id then excluded.${c} else analytics_item_day.${c} end`,
     ).join(', ')})`,
    `w0 as (${runningCountsUpdate('x')})`,
    `w1 as (${pairTotalsUpsert('x')})`,
    `rs as materialized (select * from ${reasonRows('$2')})`,
    `w2 as (${REASON_UPSERT('rs')})`,
    `w3 as (${ITEM_STATE_UPSERT('$4')})`,
    `w4 as (${USER_UPSERT('$3')})`,
    ...[...supplierBucketUpserts('x'), ...reasonRollupUpserts('rs'), ...bucketTotalUpserts('x')].map(
      (statement, i) => `w${5 + i} as (${statement})`,
    ),
  ];
  return `with ${parts.join(',\n')}, ${markers}
          select ${check}${tail}`;
}

/** The parameters $1-$4 of foldWritesSql for the rows of a batch's folds and its items' new running states. */
export const foldWritesParams = (rows: FoldRows, states: ItemStateJson[]): unknown[] => [
  JSON.stringify(rows.days.map(dayJson)),
  JSON.stringify(rows.reasons.map(reasonJson)),
  JSON.stringify(rows.users.map(userJson)),
  JSON.stringify(states),
];

/** Reason rows sent as a JSON parameter, read back with the columns of `analytics_reason_day`. */
const reasonRows = (param: string) => `jsonb_to_recordset(${param}::jsonb) as x(item_id uuid, day date,
  supplier_key uuid, reason varchar, item_name varchar, entries int, increase bigint, decrease bigint)`;

/** Upsert of the reason deltas of `source` (rows with the columns of `analytics_reason_day`). */
const REASON_UPSERT = (source: string) => `
  insert into analytics_reason_day (item_id, day, supplier_key, reason, item_name, entries, increase, decrease)
  select item_id, day, supplier_key, reason, item_name, entries, increase, decrease from ${source}
  on conflict (item_id, day, supplier_key, reason) do update set
    item_name = excluded.item_name,
    entries = analytics_reason_day.entries + excluded.entries,
    increase = analytics_reason_day.increase + excluded.increase,
    decrease = analytics_reason_day.decrease + excluded.decrease`;

const USER_UPSERT = (param: string) => `
  insert into analytics_user_day (day, supplier_key, created_by, slot, entries)
  select day, supplier_key, created_by, ${rollupSlot('item_id')}, sum(entries) from jsonb_to_recordset(${param}::jsonb)
    as x(item_id uuid, day date, supplier_key uuid, created_by varchar, entries int)
  group by 1, 2, 3, 4 order by 1, 2, 3, 4
  on conflict (day, supplier_key, created_by, slot) do update set
    entries = analytics_user_day.entries + excluded.entries`;

const ITEM_STATE_UPSERT = (param: string) => `
  insert into analytics_item (item_id, wac_q, wac_c, last_event_id)
  select * from jsonb_to_recordset(${param}::jsonb) as x(item_id uuid, wac_q int, wac_c numeric, last_event_id bigint)
  on conflict (item_id) do update set wac_q = excluded.wac_q, wac_c = excluded.wac_c,
    last_event_id = excluded.last_event_id`;
