import { formatUnits } from './decimal.js';
import type { SqlRun } from '../shared/native-transaction.js';
import {
  BUCKET_SUMS,
  pairTotalsUpsert,
  runningCountsUpdate,
  supplierBucketUpserts,
} from './activity-rollups.js';
import type { DayRow, FoldResult, ReasonRow, UserRow } from './fold-item-events.js';

export const dayJson = (r: DayRow) => ({
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
  day: r.day,
  supplier_key: r.supplierKey,
  created_by: r.createdBy,
  entries: r.entries,
});

const SUMS = [...BUCKET_SUMS, 'price_sum'];
const LATEST = [
  'supplier_name',
  'item_name',
  'closing_quantity',
  'closing_price',
  'wac_q',
  'wac_c',
  'last_event_id',
];

export const DAY_COLUMNS = `item_id uuid, day date, supplier_key uuid, supplier_name varchar, item_name varchar,
  entries int, qty_in bigint, qty_out bigint, price_sum numeric, closing_quantity int, closing_price numeric,
  wac_q int, wac_c numeric, purchases_qty bigint, purchases_cost numeric, returns_in_qty bigint,
  returns_in_cost numeric, cogs_qty bigint, cogs_cost numeric, write_off_qty bigint, write_off_cost numeric,
  last_event_id bigint`;
export const DAY_NAMES = DAY_COLUMNS.split(',').map(c => c.trim().split(/\s+/)[0]);

/** Day rows sent as a JSON parameter, read back as `x` with the columns of `analytics_item_day`. */
const dayRows = (param: string) => `jsonb_to_recordset(${param}::jsonb) as x(${DAY_COLUMNS})`;

/**
 * Merges fold deltas into the rollup tables (sums add up; the "latest" fields follow the later event).
 * Works for the consumer's increments and for the rebuild's bulk inserts alike.
 */
export async function writeRollups(
  sql: SqlRun,
  folds: FoldResult[],
  options: { dayTable?: string } = {},
): Promise<void> {
  for (let i = 0; i < folds.length;) {
    // Chunks of at most ~5000 day rows per statement keep the JSON parameters small.
    let rows = 0;
    let j = i;
    while (j < folds.length && (j === i || rows + folds[j].days.length <= 5000))
      rows += folds[j++].days.length;
    await writeChunk(sql, folds.slice(i, j), options);
    i = j;
  }
}

async function writeChunk(sql: SqlRun, folds: FoldResult[], options: { dayTable?: string }): Promise<void> {
  const days = folds.flatMap(f => f.days.map(dayJson));
  const items = folds
    .filter(f => f.days.length > 0)
    .map(f => ({
      item_id: f.days[0].itemId,
      wac_q: f.state.q,
      wac_c: formatUnits(f.state.c),
      last_event_id: f.state.lastEventId,
    }));
  if (options.dayTable) {
    // Bulk path of the rebuild: a plain insert into an unindexed staging table; the rest is derived at its end.
    await sql(
      `insert into ${options.dayTable} (${DAY_NAMES.join(', ')})
       select ${DAY_NAMES.join(', ')} from ${dayRows('$1')}`,
      [JSON.stringify(days)],
    );
    await sql(ITEM_STATE_UPSERT('$1'), [JSON.stringify(items)]);
    return;
  }
  if (days.length === 0) return;
  const daysJson = JSON.stringify(days);
  // The item's own rows first, each with its own day's entries in its running count: a new day row starts from
  // the pair's running count before its day (the statement's snapshot does not see its own inserts), an existing
  // one adds them; runningCountsUpdate then adds every delta to the pair's later days (one update per row, not two).
  await sql(
    `insert into analytics_item_day (${DAY_NAMES.join(', ')}, cum_entries)
     select ${DAY_NAMES.map(c => `x.${c}`).join(', ')},
            x.entries + coalesce((select p.cum_entries from analytics_item_day p
                      where p.item_id = x.item_id and p.supplier_key = x.supplier_key and p.day < x.day
                      order by p.day desc limit 1), 0)
     from ${dayRows('$1')}
     on conflict (item_id, day, supplier_key) do update set
     cum_entries = analytics_item_day.cum_entries + excluded.entries,
     ${SUMS.map(c => `${c} = analytics_item_day.${c} + excluded.${c}`).join(', ')},
     ${LATEST.map(
       c =>
         `${c} = case when excluded.last_event_id >= analytics_item_day.last_event_id then excluded.${c} else analytics_item_day.${c} end`,
     ).join(', ')}`,
    [daysJson],
  );
  // Then everything else in ONE statement (one round trip): it sees the day rows just upserted, and none of
  // its parts writes them but the running counts.
  const statements = [
    runningCountsUpdate(dayRows('$1')),
    pairTotalsUpsert(dayRows('$1')),
    REASON_UPSERT('$2'),
    ITEM_STATE_UPSERT('$4'),
    USER_UPSERT('$3'),
    ...supplierBucketUpserts(dayRows('$1')),
  ];
  await sql(`with ${statements.map((statement, i) => `w${i} as (${statement})`).join(', ')} select 1`, [
    daysJson,
    JSON.stringify(folds.flatMap(f => f.reasons.map(reasonJson))),
    JSON.stringify(folds.flatMap(f => f.users.map(userJson))),
    JSON.stringify(items),
  ]);
}

const REASON_UPSERT = (param: string) => `
  insert into analytics_reason_day (item_id, day, supplier_key, reason, item_name, entries, increase, decrease)
  select * from jsonb_to_recordset(${param}::jsonb) as x(item_id uuid, day date, supplier_key uuid, reason varchar,
    item_name varchar, entries int, increase bigint, decrease bigint)
  on conflict (item_id, day, supplier_key, reason) do update set
    item_name = excluded.item_name,
    entries = analytics_reason_day.entries + excluded.entries,
    increase = analytics_reason_day.increase + excluded.increase,
    decrease = analytics_reason_day.decrease + excluded.decrease`;

const USER_UPSERT = (param: string) => `
  insert into analytics_user_day (day, supplier_key, created_by, entries)
  select day, supplier_key, created_by, sum(entries) from jsonb_to_recordset(${param}::jsonb)
    as x(day date, supplier_key uuid, created_by varchar, entries int)
  group by day, supplier_key, created_by order by day, supplier_key, created_by
  on conflict (day, supplier_key, created_by) do update set
    entries = analytics_user_day.entries + excluded.entries`;

const ITEM_STATE_UPSERT = (param: string) => `
  insert into analytics_item (item_id, wac_q, wac_c, last_event_id)
  select * from jsonb_to_recordset(${param}::jsonb) as x(item_id uuid, wac_q int, wac_c numeric, last_event_id bigint)
  on conflict (item_id) do update set wac_q = excluded.wac_q, wac_c = excluded.wac_c,
    last_event_id = excluded.last_event_id`;
