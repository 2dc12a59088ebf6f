import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { STOCK_CHANGED } from '../../outbox/events.js';
import { ANALYTICS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../../outbox/consumers.js';
import { pendingForSql } from '../../outbox/pending-events.js';
import { nativePool, type SqlRun } from '../../shared/native-transaction.js';
import { REBUILD_LOCK_EXCLUSIVE_SESSION } from '../../outbox/rebuild-lock.js';
import {
  deriveSupplierMonths,
  SUPPLIER_DAY_ROLLUP,
  SUPPLIER_MONTH_ROLLUP,
} from '../fold/activity-rollups.js';
import { BinaryCopyWriter } from './binary-copy.js';
import { finishRebuiltTables, type DerivedRollups } from './finish-rebuilt-tables.js';
import { refoldItems } from './refold-items.js';
import {
  DAY_COPY_COLUMNS,
  ITEM_COPY_COLUMNS,
  PAIR_COPY_COLUMNS,
  REASON_SUPPLIER_COPY_COLUMNS,
  SUPPLIER_DAY_COPY_COLUMNS,
  REASON_COPY_COLUMNS,
  RollupFold,
  USER_COPY_COLUMNS,
} from './rollup-fold.js';
import {
  createRebuiltTable,
  dropRebuiltTables,
  lockRollups,
  rebuiltName,
  swapRebuiltTables,
} from './rollup-tables.js';
import { scanEvents, type PendingEvent } from './scan-events.js';
import { deriveReasonTotals, REASON_SUPPLIER_ROLLUP, REASON_TOTAL_ROLLUP } from '../fold/reason-rollups.js';
import { BUCKET_TOTAL_TABLES, deriveBucketTotals } from '../fold/bucket-totals.js';
import { DAY_SUMS } from '../fold/write-rollups.js';

export interface RebuildResult {
  items: number;
  events: number;
  durationMs: number;
  /**
   * Milliseconds of each phase, in order: the wait for the rebuild lock, the scan and fold, the loads' ends (and
   * refolds), the derived rollups with the indexes and statistics of every new table, the swap.
   */
  phasesMs: Record<string, number>;
}

/** History entries per COPY of the scan (an index range each): the granularity of progress and back-pressure. */
const EVENTS_PER_READ = 100_000;

/** The rollups the fold writes into new tables, and the connection (writer) that loads each. */
const FOLDED = {
  days: ['analytics_item_day'],
  reasons: ['analytics_reason_day'],
  users: ['analytics_user_day', 'analytics_item_supplier', SUPPLIER_DAY_ROLLUP, REASON_SUPPLIER_ROLLUP],
};

/**
 * The items' running WAC state (one row per item) is rewritten in place in the reader's transaction, not
 * swapped: a held consumer batch reads it in the same statement that waits for the rebuild lock, so it holds a
 * lock on the table for as long as the rebuild holds its own, and a swap could never take it.
 */
const ITEM_STATES = 'analytics_item';

/**
 * Rollups derived from the folded ones once those are complete (finishRebuiltTables), the larger first. A rollup
 * added here is rebuilt, indexed and swapped with the others.
 */
const DERIVED: DerivedRollups[] = [
  { tables: [SUPPLIER_MONTH_ROLLUP], sources: [SUPPLIER_DAY_ROLLUP], derive: deriveSupplierMonths },
  { tables: [REASON_TOTAL_ROLLUP], sources: [REASON_SUPPLIER_ROLLUP], derive: deriveReasonTotals },
  {
    tables: BUCKET_TOTAL_TABLES,
    sources: [SUPPLIER_DAY_ROLLUP, SUPPLIER_MONTH_ROLLUP],
    derive: deriveBucketTotals,
  },
];

const ROLLUPS = [...Object.values(FOLDED).flat(), ...DERIVED.flatMap(d => d.tables)];

/** Memory for one index build of the new tables (per writer connection, two builds at once at most). */
const INDEX_BUILD_MEMORY = "'128MB'";
/** How long the swap waits for the rollups' locks before it lets readers go on and tries again. */
const SWAP_LOCK_TIMEOUT = "'100ms'";

/**
 * Every event of the rebuild's snapshot: the history plus rebuild_pending (`where` narrows both). Both sides
 * have the same column types, so an order by event id merges the history's event index with the sorted pending
 * rows instead of sorting the whole history.
 */
const sourceSql = (where = '') => `
  select outbox_event_id as event_id, item_id, item_name::text, supplier_id, supplier_name::text, change,
         quantity_after, reason::text, price_at_change::text as price, created_by::text,
         ("timestamp" at time zone 'UTC')::date::text as day_text,
         case when reversal_of is not null then unit_cost::text end as reversal_unit_cost,
         case when reversal_of is null then unit_cost::text end as unit_cost
  from stock_history ${where}
  union all
  select event_id, item_id, item_name, supplier_id, supplier_name, change, quantity_after, reason, price,
         created_by, day::text, reversal_unit_cost, unit_cost
  from rebuild_pending ${where}`;

/**
 * Recomputes every analytics rollup from the stock history into NEW tables and swaps them in, so readers see the
 * old rollups until the new ones are complete, in one short transaction.
 *
 * The reader connection takes the rebuild lock (a session lock: inside the transaction, taking it would fix the
 * snapshot before the wait), so no analytics fold runs meanwhile; drops the new tables a crashed rebuild left;
 * and opens ONE repeatable-read transaction whose snapshot is the rebuild's: the history plus the
 * `stock.changed` events whose entry is not written yet. Writes go on; events committed later stay pending for
 * the consumer, which folds them after the swap (for one item always newer than everything in the snapshot).
 * It reads the events in event-id order as binary COPY (scan-events.ts) into the typed fold (rollup-fold.ts),
 * which writes the day, reason and user rows (then the pair totals, supplier day buckets and reason rows per
 * supplier, sums it kept) as binary COPY on writer connections of their own (so PostgreSQL loads them on other
 * cores while Node folds) into new tables without indexes, in their creating transactions (COPY FREEZE: no later
 * pass sets hint bits or freezes them). Once the rows are in and committed, the derived rollups are filled from
 * the new tables, every index is built (a sorted build each) and every table analyzed, two statements at a time
 * on the writers' connections (finish-rebuilt-tables.ts). Then the reader's transaction marks the snapshot's
 * events folded for the analytics consumer, drops the old rollups and gives the new tables their names, indexes
 * and constraints, and commits.
 *
 * Memory follows the items, and the days times suppliers (times reasons) of the sums, never the number of
 * entries. A crash at any point leaves the old rollups as they were (the new tables are dropped by the next
 * rebuild).
 */
export async function rebuildRollups(
  em: EntityManager,
  onProgress: (percent: number) => Promise<void> = async () => undefined,
): Promise<RebuildResult> {
  const clock = phaseClock();
  const c = new Connections((await nativePool(em)).options);
  try {
    await takeLock(c);
    clock.end('lock');
    const snapshot = await openSnapshot(c);
    const fold = await scanAndFold(c, snapshot, onProgress);
    clock.end('scan');
    await onProgress(72);
    await Promise.all([finishUserRows(c, fold), mergeLoads(c, fold)]);
    clock.end('load');
    await onProgress(75);
    await finishTables(c, onProgress);
    clock.end('index, derive and analyze');
    await onProgress(96);
    await swapIn(c, fold, onProgress);
    clock.end('swap');
    await onProgress(100);
    return { items: fold.items.size, events: fold.events, durationMs: clock.total(), phasesMs: clock.phases };
  } finally {
    await c.close();
  }
}

/** Milliseconds of each phase, each from the end of the one before. */
function phaseClock() {
  const started = Date.now();
  const phases: Record<string, number> = {};
  let phaseStart = started;
  return {
    phases,
    end(name: string) {
      const now = Date.now();
      phases[name] = now - phaseStart;
      phaseStart = now;
    },
    total: () => Date.now() - started,
  };
}

/**
 * The rebuild's connections: the reader (the lock, the snapshot, the scan and the swap) and a writer per folded
 * table (`days`, `reasons`, `users`) and for the reason rows of day rows written twice (`duplicates`), each with
 * its statement runner. Connections of their own (the ORM's settings and type parsers), closed at the end. A
 * full rebuild runs long statements by design: no statement timeout; locks are waited for as long as it takes.
 */
class Connections {
  private readonly opened: pg.Client[] = [];
  reader!: pg.Client;
  read!: SqlRun;
  days!: pg.Client;
  daySql!: SqlRun;
  reasons!: pg.Client;
  reasonSql!: SqlRun;
  users!: pg.Client;
  userSql!: SqlRun;
  duplicates!: pg.Client;
  duplicateSql!: SqlRun;

  constructor(private readonly options: pg.ClientConfig) {}

  async connect(): Promise<pg.Client> {
    const client = new pg.Client(this.options);
    this.opened.push(client);
    client.on('error', () => undefined);
    await client.connect();
    await client.query('set statement_timeout = 0');
    await client.query('set lock_timeout = 0');
    return client;
  }

  async openReader(): Promise<void> {
    this.reader = await this.connect();
    this.read = run(this.reader);
  }

  async openWriters(): Promise<void> {
    [this.days, this.reasons, this.users, this.duplicates] = await Promise.all([
      this.connect(),
      this.connect(),
      this.connect(),
      this.connect(),
    ]);
    [this.daySql, this.reasonSql, this.userSql, this.duplicateSql] = [
      run(this.days),
      run(this.reasons),
      run(this.users),
      run(this.duplicates),
    ];
  }

  /** Closing the connections ends unfinished transactions (their new tables vanish) and releases the lock. */
  async close(): Promise<void> {
    await Promise.all(this.opened.map(client => client.end().catch(() => undefined)));
  }
}

/** The rebuild lock, then the new tables a crashed rebuild left are dropped. */
async function takeLock(c: Connections): Promise<void> {
  await c.openReader();
  await c.reader.query(`select ${REBUILD_LOCK_EXCLUSIVE_SESSION}`);
  await dropRebuiltTables(c.read, ROLLUPS);
  await c.read(`drop table if exists ${DUPLICATE_REASONS}`);
}

/** What the rebuild's snapshot holds: its pending events, the number of events and the range of their days. */
interface Snapshot {
  pending: PendingEvent[];
  totalEvents: number;
  /** Days from 2000-01-01. */
  firstDay: number;
  dayCount: number;
}

/**
 * Opens the reader's repeatable-read transaction (the rebuild's snapshot) with the `stock.changed` events whose
 * entry is not written yet in `rebuild_pending`; counts the events and the range of their days from the
 * history's month counts (never a count of the history) and the pending events.
 */
async function openSnapshot(c: Connections): Promise<Snapshot> {
  const { reader, read } = c;
  await reader.query('begin isolation level repeatable read');
  await read(`
    create temp table rebuild_pending on commit drop as
    select o.id as event_id, (o.payload->>'itemId')::uuid as item_id, o.payload->>'itemName' as item_name,
           (o.payload->>'supplierId')::uuid as supplier_id, o.payload->>'supplierName' as supplier_name,
           (o.payload->>'change')::int as change, (o.payload->>'quantityAfter')::int as quantity_after,
           o.payload->>'reason' as reason, o.payload->>'priceAtChange' as price,
           o.payload->>'createdBy' as created_by,
           ((o.payload->>'occurredAt')::timestamptz at time zone 'UTC')::date as day,
           case when o.payload ? 'reversalOf' then o.payload->>'unitCost' end as reversal_unit_cost,
           case when not o.payload ? 'reversalOf' then o.payload->>'unitCost' end as unit_cost
    from outbox_event o
    where o.type = '${STOCK_CHANGED}' and ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}
      and not exists (select 1 from stock_history h where h.outbox_event_id = o.id)`);
  const pending = await read<PendingEvent>(
    `select event_id, item_id, item_name, supplier_id, supplier_name, change, quantity_after, reason, price,
            created_by, day - date '2000-01-01' as day, reversal_unit_cost, unit_cost
     from rebuild_pending order by event_id`,
  );
  const [{ n }] = await read<{ n: string }>(
    'select (select coalesce(sum(entries), 0) from history_count_month) as n',
  );
  const [range] = await read<{ first: number | null; last: number | null }>(
    `select min(month) - date '2000-01-01' as first,
            (max(month) + interval '1 month')::date - date '2000-01-01' as last
     from history_count_month`,
  );
  const pendingDays = pending.map(e => Number(e.day));
  const firstDay = Math.min(range.first ?? Infinity, ...pendingDays);
  const lastDay = Math.max(range.last ?? -Infinity, ...pendingDays.map(day => day + 1));
  return {
    pending,
    totalEvents: Math.max(1, Number(n) + pending.length),
    firstDay,
    dayCount: Number.isFinite(firstDay) ? lastDay - firstDay : 0,
  };
}

/**
 * Opens the writers' transactions with the folded rollups' new tables and their COPYs, and folds every event of
 * the snapshot into them (the writers set the pace: the rows of one piece of the read at most wait in memory).
 * The day, reason and user rows stay in their writers' open transactions; the duplicates' table is committed.
 */
async function scanAndFold(
  c: Connections,
  snapshot: Snapshot,
  onProgress: (percent: number) => Promise<void>,
): Promise<RollupFold> {
  await c.openWriters();
  for (const [client, sql, tables] of [
    [c.days, c.daySql, FOLDED.days],
    [c.reasons, c.reasonSql, FOLDED.reasons],
    [c.users, c.userSql, FOLDED.users],
  ] as const) {
    await client.query('begin');
    for (const table of tables) await createRebuiltTable(sql, table);
  }
  await c.duplicates.query('begin');
  await c.duplicateSql(
    `create table ${DUPLICATE_REASONS} (like analytics_reason_day including defaults, last_event_id bigint)`,
  );
  const duplicateReasonRows = new BinaryCopyWriter(
    c.duplicates.query(
      copyFrom(
        `copy ${DUPLICATE_REASONS} (${REASON_COPY_COLUMNS.join(', ')}, last_event_id) from stdin (format binary, freeze)`,
      ),
    ),
  );
  const dayRows = copyInto(c.days, 'analytics_item_day', DAY_COPY_COLUMNS);
  const reasonRows = copyInto(c.reasons, 'analytics_reason_day', REASON_COPY_COLUMNS);
  const userRows = copyInto(c.users, 'analytics_user_day', USER_COPY_COLUMNS);
  const writers = [dayRows, reasonRows, userRows, duplicateReasonRows];
  const fold = new RollupFold(
    dayRows,
    reasonRows,
    userRows,
    duplicateReasonRows,
    snapshot.firstDay,
    snapshot.dayCount,
  );
  await onProgress(0);
  const drained = () => Promise.all(writers.map(w => w.drained())).then(() => undefined);
  await scanEvents(
    c.reader,
    fold,
    snapshot.pending,
    EVENTS_PER_READ,
    events => onProgress(Math.min(70, Math.floor((events / snapshot.totalEvents) * 70))),
    () => (writers.some(w => w.pressure) ? drained() : undefined),
  );
  fold.finish();
  await Promise.all(writers.map(w => w.end()));
  await c.duplicates.query('commit');
  return fold;
}

/**
 * Writes the pair totals, the supplier day buckets and the reason rows per supplier (RollupFold.writePairs,
 * writeSupplierDays, writeReasonDays), merges the user rows of days written twice
 * (RollupFold.lateDays) and commits both.
 */
async function finishUserRows(c: Connections, fold: RollupFold): Promise<void> {
  const pairs = copyInto(c.users, 'analytics_item_supplier', PAIR_COPY_COLUMNS);
  fold.writePairs(pairs);
  await pairs.end();
  const supplierDays = copyInto(c.users, SUPPLIER_DAY_ROLLUP, SUPPLIER_DAY_COPY_COLUMNS);
  fold.writeSupplierDays(supplierDays);
  await supplierDays.end();
  const reasonDays = copyInto(c.users, REASON_SUPPLIER_ROLLUP, REASON_SUPPLIER_COPY_COLUMNS);
  fold.writeReasonDays(reasonDays);
  await reasonDays.end();
  const late = fold.lateDays();
  const table = rebuiltName('analytics_user_day');
  if (late.length > 0)
    await c.userSql(
      `with late as (delete from ${table} where day = any($1::date[]) returning *)
       insert into ${table} (day, supplier_key, created_by, slot, entries)
       select day, supplier_key, created_by, slot, sum(entries) from late group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
      [late.map(isoDay)],
    );
  await c.users.query('commit');
}

/**
 * The ends of the day and reason loads: items whose events went back to days already written are folded again,
 * whole; day rows written twice (an item back on a day it had left) are merged, then the running counts of the
 * pairs written out of day order are recounted (only the rows whose count changes are written again).
 */
async function mergeLoads(c: Connections, fold: RollupFold): Promise<void> {
  const revisited = fold.revisitedItems();
  if (revisited.length > 0) await refoldRevisited(c, revisited);
  const dirty = fold.dirtyItems();
  await Promise.all([
    (async () => {
      if (fold.duplicates.length > 0) await mergeDayRows(c.days, c.daySql, fold, revisited);
      if (dirty.length > 0) await recountDayRows(c.daySql, dirty);
    })(),
    (async () => {
      if (fold.duplicates.length > 0) await mergeReasonRows(c.reasonSql, revisited);
      // Dropped in the reason rows' transaction, which has read it.
      await c.reasonSql(`drop table ${DUPLICATE_REASONS}`);
    })(),
  ]);
}

/** The day and reason rows of `items` deleted and written again from their events, folded whole. */
async function refoldRevisited(c: Connections, items: string[]): Promise<void> {
  await Promise.all([
    c.daySql(`delete from ${rebuiltName('analytics_item_day')} where item_id = any($1::uuid[])`, [items]),
    c.reasonSql(`delete from ${rebuiltName('analytics_reason_day')} where item_id = any($1::uuid[])`, [
      items,
    ]),
  ]);
  const days = copyInto(c.days, 'analytics_item_day', DAY_COPY_COLUMNS, false);
  const reasons = copyInto(c.reasons, 'analytics_reason_day', REASON_COPY_COLUMNS, false);
  await refoldItems(c.read, sourceSql('where item_id = any($1::uuid[])'), items, days, reasons);
  await Promise.all([days.end(), reasons.end()]);
}

/**
 * Commits the day and reason rows and completes every new table on their writers' connections
 * (finishRebuiltTables): the derived rollups filled, the indexes built, the statistics taken (which the tables
 * keep when they take the rollups' names: the readers' plans know the new row counts from the first read).
 * Progress rises from 75 to 95 with the statements done.
 */
async function finishTables(c: Connections, onProgress: (percent: number) => Promise<void>): Promise<void> {
  await Promise.all([c.days.query('commit'), c.reasons.query('commit')]);
  const lanes = [c.daySql, c.reasonSql];
  for (const sql of lanes) await sql(`set maintenance_work_mem = ${INDEX_BUILD_MEMORY}`);
  let progress = Promise.resolve();
  await finishRebuiltTables(lanes, Object.values(FOLDED).flat(), DERIVED, (finished, total) => {
    const percent = 75 + Math.floor((finished / total) * 20);
    progress = progress.then(() => onProgress(percent));
  });
  await progress;
}

/**
 * In the reader's transaction: the snapshot's events are marked folded for the analytics consumer, the items'
 * states rewritten, the new tables swapped in; then it commits.
 */
async function swapIn(
  c: Connections,
  fold: RollupFold,
  onProgress: (percent: number) => Promise<void>,
): Promise<void> {
  const { reader, read } = c;
  await read(
    `update outbox_pending p set done_at = now()
     where p.consumer = ${ANALYTICS_CONSUMER.code} and p.done_at is null
       and (exists (select 1 from stock_history h where h.outbox_event_id = p.id)
            or exists (select 1 from rebuild_pending r where r.event_id = p.id))`,
  );
  await onProgress(97);
  await read(`delete from ${ITEM_STATES}`);
  const items = new BinaryCopyWriter(
    reader.query(
      copyFrom(`copy ${ITEM_STATES} (${ITEM_COPY_COLUMNS.join(', ')}) from stdin (format binary)`),
    ),
  );
  fold.writeItems(items);
  await items.end();
  await swap(reader, read);
  await reader.query('commit');
  await read(`analyze ${ITEM_STATES}`);
}

/** The reason rows of day rows written twice, with their runs' last event ids (a table of the rebuild's own). */
const DUPLICATE_REASONS = `${rebuiltName('analytics_reason_day')}_duplicates`;

const isoDay = (day: number) => new Date(Date.UTC(2000, 0, 1 + day)).toISOString().slice(0, 10);

/**
 * Merges the new day rows written twice (RollupFold.duplicates; sums added, the rest from the row of the latest
 * event), leaving out the items folded again (`refolded`). Their keys go to the server as binary COPY rows (no
 * string per key).
 */
async function mergeDayRows(
  client: pg.Client,
  sql: SqlRun,
  fold: RollupFold,
  refolded: string[],
): Promise<void> {
  const table = rebuiltName('analytics_item_day');
  const columns = DAY_COPY_COLUMNS.filter(c => c !== 'cum_entries');
  const merged = columns.map(c =>
    ['item_id', 'day', 'supplier_key'].includes(c)
      ? c
      : DAY_SUMS.includes(c)
        ? `sum(${c})`
        : `(array_agg(${c} order by last_event_id desc))[1]`,
  );
  await sql('create temp table rebuild_twice (item_id uuid, day date, supplier_key uuid) on commit drop');
  const keys = new BinaryCopyWriter(client.query(copyFrom('copy rebuild_twice from stdin (format binary)')));
  for (let i = 0; i < fold.duplicates.length; i += 3) {
    keys.row(3);
    keys.uuid(fold.items.bytes, 16 * fold.duplicates[i]);
    keys.date(fold.duplicates[i + 1]);
    keys.uuid(fold.suppliers.bytes, 16 * fold.duplicates[i + 2]);
  }
  await keys.end();
  await sql(
    `with k as (select distinct item_id, day, supplier_key from rebuild_twice where item_id <> all($1::uuid[])),
          d as (delete from ${table} t using k
                where t.item_id = k.item_id and t.day = k.day and t.supplier_key = k.supplier_key returning t.*)
     insert into ${table} (${columns.join(', ')}, cum_entries)
     select ${merged.join(', ')}, 0 from d group by item_id, day, supplier_key`,
    [refolded],
  );
}

/** Recounts the running counts of the new day rows of `items`, writing the rows whose count changes. */
async function recountDayRows(sql: SqlRun, items: string[]): Promise<void> {
  const table = rebuiltName('analytics_item_day');
  await sql(
    `update ${table} t set cum_entries = w.cum
     from (select ctid as tid, cum_entries,
                  sum(entries) over (partition by item_id, supplier_key order by day) as cum
           from ${table} where item_id = any($1::uuid[])) w
     where t.ctid = w.tid and t.cum_entries <> w.cum`,
    [items],
  );
}

/**
 * Merges the new reason rows with the reason rows of day rows written twice (DUPLICATE_REASONS): sums added, the
 * name from the latest run (a row written first has the earliest events of its key). Items folded again
 * (`refolded`) are left out: their rows are written whole.
 */
async function mergeReasonRows(sql: SqlRun, refolded: string[]): Promise<void> {
  const table = rebuiltName('analytics_reason_day');
  const columns = REASON_COPY_COLUMNS.join(', ');
  await sql(
    `with twice as (select * from ${DUPLICATE_REASONS} where item_id <> all($1::uuid[])),
          d as (delete from ${table} t
                using (select distinct item_id, day, supplier_key, reason from twice) k
                where t.item_id = k.item_id and t.day = k.day and t.supplier_key = k.supplier_key
                  and t.reason = k.reason
                returning t.*)
     insert into ${table} (${columns})
     select item_id, day, supplier_key, reason,
            (array_agg(item_name order by last_event_id desc nulls last))[1], sum(entries), sum(increase),
            sum(decrease)
     from (select ${columns}, null::bigint as last_event_id from d
           union all select ${columns}, last_event_id from twice) x
     group by item_id, day, supplier_key, reason`,
    [refolded],
  );
}

/** Statements with native parameters on one connection. */
const run =
  (client: pg.Client): SqlRun =>
  async <T>(text: string, values: unknown[] = []) =>
    (await client.query(text, values)).rows as T[];

/** A binary COPY into a rollup's new table, created in this transaction (`freeze`: its rows load frozen). */
function copyInto(client: pg.Client, table: string, columns: string[], freeze = true): BinaryCopyWriter {
  return new BinaryCopyWriter(
    client.query(
      copyFrom(
        `copy ${rebuiltName(table)} (${columns.join(', ')}) from stdin (format binary${freeze ? ', freeze' : ''})`,
      ),
    ),
  );
}

/**
 * The swap, inside the reader's transaction: the rollups' locks with a short timeout (a savepoint undoes a try
 * that timed out, and the readers it made wait go on), then the tables change places.
 */
async function swap(reader: pg.Client, read: SqlRun): Promise<void> {
  for (;;) {
    await reader.query('savepoint rebuild_swap');
    try {
      await reader.query(`set local lock_timeout = ${SWAP_LOCK_TIMEOUT}`);
      await lockRollups(read, ROLLUPS);
      await reader.query('set local lock_timeout = 0');
      await swapRebuiltTables(read, ROLLUPS);
      await reader.query('release savepoint rebuild_swap');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '55P03') throw error;
      await reader.query('rollback to savepoint rebuild_swap');
      await new Promise(resolve => setTimeout(resolve, 50 + Math.floor(Math.random() * 200)));
    }
  }
}
