import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { STOCK_CHANGED } from '../outbox/events.js';
import { ANALYTICS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../outbox/consumers.js';
import { pendingForSql } from '../outbox/pending-events.js';
import { nativePool, statementName, type SqlRun } from '../shared/native-transaction.js';
import { foldItemEvents, NO_SUPPLIER, type DayRow, type FoldEvent } from './fold-item-events.js';
import type { WacState } from './wac.js';
import { REBUILD_LOCK_EXCLUSIVE_SESSION } from './locks.js';
import { DAY_NAMES, LATEST, stageDayRows, SUMS, writeItemStates } from './write-rollups.js';
import { CUM_ENTRIES_WINDOW, deriveActivityRollups } from './activity-rollups.js';
import { deriveReasonRollups, REASON_ROLLUP_TABLES } from './reason-rollups.js';
import { BUCKET_TOTAL_TABLES, deriveBucketTotals } from './bucket-totals.js';

export interface RebuildResult {
  items: number;
  events: number;
  durationMs: number;
}

/** Events per cursor read of the stream; day rows per staging write. */
const EVENTS_PER_READ = 20_000;
const DAY_ROWS_PER_WRITE = 5_000;

const ROLLUP_TABLES = [
  'analytics_item_day',
  'analytics_reason_day',
  'analytics_user_day',
  'analytics_item',
  'analytics_item_supplier',
  'analytics_supplier_day',
  'analytics_supplier_month',
  ...REASON_ROLLUP_TABLES,
  ...BUCKET_TOTAL_TABLES,
];

/**
 * Every event of the rebuild's snapshot: the history plus rebuild_pending (`where` narrows both). Both sides
 * have the same column types, so an order by event id merges the history's event index with the sorted pending
 * rows instead of sorting the whole history.
 */
const sourceSql = (where = '') => `
  select outbox_event_id as event_id, item_id, item_name::text, supplier_id, supplier_name::text, change,
         quantity_after, reason::text, price_at_change::text as price, created_by::text,
         ("timestamp" at time zone 'UTC')::date as day,
         case when reversal_of is not null then unit_cost::text end as reversal_unit_cost
  from stock_history ${where}
  union all
  select event_id, item_id, item_name, supplier_id, supplier_name, change, quantity_after, reason, price,
         created_by, day, reversal_unit_cost
  from rebuild_pending ${where}`;

/**
 * Recomputes every analytics rollup from the stock history in ONE repeatable-read transaction, so readers see
 * the old rollups until it commits and every statement reads the same snapshot of committed events: the
 * history plus the `stock.changed` events whose entry is not written yet. The rebuild lock is taken on the
 * connection before that transaction starts (a session lock: inside it, taking it would fix the snapshot before
 * the wait), so no analytics fold runs meanwhile (a full rebuild is a long transaction by design: no statement
 * timeout on its connection); writes go on, and events committed later stay pending for the
 * consumer, which folds them afterwards (for one item always newer than everything in the snapshot). The
 * events are read item by item in bounded batches, straight from the history's item index, so the worker's
 * memory does not grow with the history; reason and user rows are aggregated in SQL per batch.
 */
export async function rebuildRollups(
  em: EntityManager,
  onProgress: (percent: number) => Promise<void> = async () => undefined,
): Promise<RebuildResult> {
  const started = Date.now();
  // A connection of its own (the ORM's settings and type parsers), held for the whole rebuild and closed after.
  const client = new pg.Client((await nativePool(em)).options);
  await client.connect();
  client.on('error', () => undefined);
  const sql: SqlRun = async <T>(text: string, values: unknown[] = []) =>
    (await client.query({ name: statementName(text), text, values })).rows as T[];
  try {
    await client.query('set statement_timeout = 0');
    // It also waits as long as it takes for the consumers' shared hold of the rebuild lock.
    await client.query('set lock_timeout = 0');
    await client.query(`select ${REBUILD_LOCK_EXCLUSIVE_SESSION}`);
    await client.query('begin isolation level repeatable read');
    const result = await rebuildIn(sql, onProgress);
    await client.query('commit');
    // The rollups were replaced whole: their statistics are made anew, or the readers' plans would still
    // assume the old row counts.
    await client.query(`analyze ${ROLLUP_TABLES.join(', ')}`);
    return { ...result, durationMs: Date.now() - started };
  } finally {
    // Closing the connection ends an unfinished transaction and releases the session lock.
    await client.end().catch(() => undefined);
  }
}

/** An item's fold while the stream passes: its state, and its events of the latest day not yet folded. */
interface OpenItem {
  state: WacState & { lastEventId: string };
  day: string;
  events: FoldEvent[];
}

async function rebuildIn(sql: SqlRun, onProgress: (percent: number) => Promise<void>) {
  await sql(`
    create temp table rebuild_pending on commit drop as
    select o.id as event_id, (o.payload->>'itemId')::uuid as item_id, o.payload->>'itemName' as item_name,
           (o.payload->>'supplierId')::uuid as supplier_id, o.payload->>'supplierName' as supplier_name,
           (o.payload->>'change')::int as change, (o.payload->>'quantityAfter')::int as quantity_after,
           o.payload->>'reason' as reason, o.payload->>'priceAtChange' as price,
           o.payload->>'createdBy' as created_by,
           ((o.payload->>'occurredAt')::timestamptz at time zone 'UTC')::date as day,
           case when o.payload ? 'reversalOf' then o.payload->>'unitCost' end as reversal_unit_cost
    from outbox_event o
    where o.type = '${STOCK_CHANGED}' and ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}
      and not exists (select 1 from stock_history h where h.outbox_event_id = o.id)`);
  // The number of events, from the history's count rows (never a count of the history).
  const [{ n }] = await sql<{ n: string }>(`
    select (select coalesce(sum(entries), 0) from history_count_month)
         + (select count(*) from rebuild_pending) as n`);
  const totalEvents = Number(n);
  for (const table of ROLLUP_TABLES) await sql(`delete from ${table}`);
  // Day rows are staged unindexed and copied in day order at the end: range scans by day then touch
  // contiguous pages (the consumer appends in time order anyway).
  await sql(
    'create temp table rebuild_item_day on commit drop as select * from analytics_item_day with no data',
  );
  await onProgress(0);

  // One pass over every event in event-id order (the history's event index follows its physical order, so
  // this reads it about sequentially). Each item's events are folded a UTC day at a time, when its next day
  // begins, with the state its earlier days left: memory holds one day of each item, never the history. An
  // item whose events go back to an earlier day (clocks out of order) stages more than one row for a day; those
  // are merged when the rows are copied (sums added, the rest from the later row), as one fold would have.
  const open = new Map<string, OpenItem>();
  const revisited = new Set<string>();
  let staged: DayRow[] = [];
  const fold = (item: OpenItem) => {
    const result = foldItemEvents(item.state, item.events);
    item.state = result.state;
    item.events = [];
    for (const day of result.days) staged.push(day);
  };
  // A cursor declared in SQL, so the staging writes can run on the same connection between its reads.
  await sql(`declare rebuild_events no scroll cursor for ${sourceSql()} order by event_id`);
  let events = 0;
  for (;;) {
    const rows = await sql<any>(`fetch ${EVENTS_PER_READ} from rebuild_events`);
    if (rows.length === 0) break;
    for (const r of rows) {
      const event = foldEvent(r);
      let item = open.get(event.itemId);
      if (!item)
        open.set(
          event.itemId,
          (item = { state: { q: 0, c: 0n, lastEventId: '0' }, day: event.day, events: [] }),
        );
      if (event.day !== item.day && item.events.length > 0) {
        if (event.day < item.day) revisited.add(event.itemId);
        fold(item);
      }
      item.day = event.day;
      item.events.push(event);
    }
    events += rows.length;
    if (staged.length >= DAY_ROWS_PER_WRITE) {
      await stageDayRows(sql, staged, 'rebuild_item_day');
      staged = [];
    }
    await onProgress(Math.min(80, Math.floor((events / Math.max(1, totalEvents)) * 80)));
  }
  await sql('close rebuild_events');
  for (const item of open.values()) if (item.events.length > 0) fold(item);
  await stageDayRows(sql, staged, 'rebuild_item_day');
  staged = [];
  const states = [...open].map(([itemId, item]) => ({ itemId, ...item.state }));
  await writeItemStates(sql, states);

  await sql(
    `insert into analytics_item_day (${DAY_NAMES.join(', ')}, cum_entries)
     select ${DAY_NAMES.join(', ')}, ${CUM_ENTRIES_WINDOW}
     from (select ${DAY_NAMES.join(', ')} from rebuild_item_day where not (item_id = any($1::uuid[]))
           union all
           select item_id, day, supplier_key, ${DAY_NAMES.filter(
             c => !['item_id', 'day', 'supplier_key'].includes(c),
           )
             .map(c =>
               SUMS.includes(c)
                 ? `sum(${c})`
                 : LATEST.includes(c)
                   ? `(array_agg(${c} order by last_event_id desc))[1]`
                   : c,
             )
             .join(', ')}
           from rebuild_item_day where item_id = any($1::uuid[]) group by item_id, day, supplier_key) d
     order by day, item_id, supplier_key`,
    [[...revisited]],
  );
  await onProgress(85);
  await deriveActivityRollups(sql);
  await deriveBucketTotals(sql);
  await sql(`
    insert into analytics_reason_day (item_id, day, supplier_key, reason, item_name, entries, increase, decrease)
    select item_id, day, coalesce(supplier_id, '${NO_SUPPLIER}'), reason,
           (array_agg(item_name order by event_id desc))[1], count(*),
           sum(greatest(change, 0)), sum(greatest(-change, 0))
    from (${sourceSql()}) s group by 1, 2, 3, 4 order by 2, 1`);
  await deriveReasonRollups(sql);
  await onProgress(95);
  await sql(`
    insert into analytics_user_day (day, supplier_key, created_by, entries)
    select day, coalesce(supplier_id, '${NO_SUPPLIER}'), created_by, count(*)
    from (${sourceSql()}) s group by 1, 2, 3 order by 1`);
  // The snapshot's events are folded: the analytics consumer's progress rows of them are set.
  await sql(
    `update outbox_pending p set done_at = now()
     where p.consumer = ${ANALYTICS_CONSUMER.code} and p.done_at is null
       and (exists (select 1 from stock_history h where h.outbox_event_id = p.id)
            or exists (select 1 from rebuild_pending r where r.event_id = p.id))`,
  );
  await onProgress(100);
  return { items: states.length, events };
}

/** A source row as the fold reads it (the user rows are aggregated in SQL). */
const foldEvent = (r: any): FoldEvent => ({
  eventId: String(r.event_id),
  itemId: r.item_id,
  itemName: r.item_name,
  supplierId: r.supplier_id,
  supplierName: r.supplier_name,
  day: typeof r.day === 'string' ? r.day : isoDay(r.day),
  change: Number(r.change),
  quantityAfter: Number(r.quantity_after),
  reason: r.reason,
  priceAtChange: String(r.price),
  createdBy: '',
  ...(r.reversal_unit_cost === null ? {} : { reversalUnitCost: String(r.reversal_unit_cost) }),
});

const isoDay = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
