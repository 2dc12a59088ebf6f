import pg from 'pg';
import { openOrm } from '../../config/database.js';
import { benchDatabaseUrl, resetBenchDatabase } from './support.js';
import { createDatabases } from '../create-databases.js';
import { rebuildRollups } from '../../domain/analytics/rebuild/rebuild-rollups.js';
import { dashboardSummary } from '../../domain/analytics/queries/dashboard-summary.js';
import { financialSummary } from '../../domain/analytics/queries/financial-summary.js';
import { stockPerSupplier } from '../../domain/analytics/queries/stock-per-supplier.js';
import { lowStockItems } from '../../domain/analytics/queries/low-stock-items.js';
import { applyWac, type WacState } from '../../domain/analytics/wac.js';
import { addDays } from '../../domain/analytics/date-params.js';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Analytics benchmark (figures, never assertions): the dashboard summary (the analytics summary) and the financial summary (the financial summary)
 * served from the rollups with 10^4 and with 10^6 stock-history rows, and the same two answers computed the
 * naive way straight from the raw history at 10^6 rows, each for the last 30 days (the analytics summary's default) and for the
 * last 12 months. The shop is fixed (300 items, 20 suppliers, one year of history); more rows mean a busier
 * shop (about 0.1 vs 9 changes per item per day), which is what makes a history hold millions of rows. Rows are
 * bulk-loaded with generate_series, the rollups built by the real rebuild.
 */
const BENCH_DB = 'stockroom_bench_analytics';
const ITEMS = 300;
const SUPPLIERS = 20;
const HISTORY_DAYS = 365;
const END_DAY = '2026-11-21';

const benchUrl = () => benchDatabaseUrl(BENCH_DB);

async function load(client: pg.Client, rows: number): Promise<void> {
  await resetBenchDatabase(client, benchUrl());
  const spanMs = HISTORY_DAYS * 86400000;
  const endMs = Date.parse(`${END_DAY}T23:59:59Z`);
  await client.query(`
    insert into supplier (id, name, created_by)
    select ('00000000-0000-4000-8000-' || lpad(s::text, 12, '0'))::uuid, 'Supplier ' || s, 'bench'
    from generate_series(1, ${SUPPLIERS}) s`);
  // Per item, event k: k = 0 -> +100 INITIAL_STOCK; k % 3 = 0 -> +30 RESTOCK; else -10 SALE (DAMAGED when
  // k % 5 = 0). Quantity after k: 100 + 40 * floor(k / 3) - 10 * k (never below 80).
  await client.query(`
    insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
      quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
    select g, item, 'Item ' || i, sup, 'Supplier ' || (i % ${SUPPLIERS} + 1), ch,
           q - ch, q, reason, price, 'user' || (g % 5) || '@example.test',
           to_timestamp((${endMs} - (${rows} - g)::float8 * ${spanMs / rows}) / 1000)
    from (
      select g, i, k,
        ('00000000-0000-4000-9000-' || lpad(i::text, 12, '0'))::uuid as item,
        ('00000000-0000-4000-8000-' || lpad((i % ${SUPPLIERS} + 1)::text, 12, '0'))::uuid as sup,
        case when k = 0 then 100 when k % 3 = 0 then 30 else -10 end as ch,
        100 + 40 * (k / 3) - 10 * k as q,
        case when k = 0 then 'INITIAL_STOCK' when k % 3 = 0 then 'RESTOCK' when k % 5 = 0 then 'DAMAGED' else 'SALE' end as reason,
        (5 + (i % 50) * 0.25 + (k / 30) * 0.05)::numeric(12, 2) as price
      from (select g, (g - 1) % ${ITEMS} as i, (g - 1) / ${ITEMS} as k from generate_series(1, ${rows}) g) x
    ) y`);
  await client.query(`
    insert into inventory_item (id, name, quantity, price, minimum_quantity, supplier_id, created_by)
    select distinct on (item_id) item_id, item_name, quantity_after, price_at_change,
           case when item_id::text like '%7' then 200 else 10 end, supplier_id, 'bench'
    from stock_history order by item_id, outbox_event_id desc`);
  await client.query('analyze');
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(name: string, iterations: number, fn: () => Promise<unknown>) {
  // Warm-up runs (JIT, plan and buffer caches), so the first size measured is not the one that pays for them.
  for (let i = 0; i < Math.min(20, iterations); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { name, p50: percentile(times, 50), p95: percentile(times, 95), n: iterations };
}

/** The analytics summary the naive way: the same parts, movement and top items aggregated from raw history rows. */
async function naiveDashboard(em: EntityManager, range: { start: string; end: string }) {
  const from = `${range.start}T00:00:00Z`;
  const to = `${addDays(range.end, 1)}T00:00:00Z`;
  return {
    stockPerSupplier: await stockPerSupplier(em),
    lowStockItems: await lowStockItems(em, null, 5),
    monthlyStockMovement: await em.execute(
      `select to_char("timestamp" at time zone 'UTC', 'YYYY-MM') as month, sum(greatest(change, 0)) as stock_in,
              sum(greatest(-change, 0)) as stock_out
       from stock_history where "timestamp" >= ? and "timestamp" < ? group by 1 order by 1`,
      [from, to],
    ),
    topUpdatedItems: await em.execute(
      `select item_id, count(*) as n from stock_history where "timestamp" >= ? and "timestamp" < ?
       group by item_id order by n desc, item_id limit 5`,
      [from, to],
    ),
  };
}

/** The financial summary the naive way: every history row up to `to`, per item in event order, through the WAC algorithm. */
async function naiveFinancial(em: EntityManager, range: { start: string; end: string }) {
  const to = `${addDays(range.end, 1)}T00:00:00Z`;
  let after = '00000000-0000-0000-0000-000000000000';
  const totals = { opening: 0n, ending: 0n, cogs: 0n, purchases: 0n };
  for (;;) {
    const rows = await em.execute<any[]>(
      `select item_id, change, reason,
              coalesce(case when reversal_of is null then unit_cost end, price_at_change)::text as price,
              to_char("timestamp" at time zone 'UTC', 'YYYY-MM-DD') as day
       from stock_history where item_id in (
         select distinct item_id from stock_history where item_id > ? order by item_id limit 100)
         and "timestamp" < ? order by item_id, outbox_event_id`,
      [after, to],
    );
    if (rows.length === 0) break;
    let current = '';
    let state: WacState = { q: 0, c: 0n };
    let opening: WacState = state;
    const close = () => {
      totals.opening += BigInt(opening.q) * opening.c;
      totals.ending += BigInt(state.q) * state.c;
    };
    for (const r of rows) {
      if (r.item_id !== current) {
        if (current) close();
        current = r.item_id;
        state = { q: 0, c: 0n };
        opening = state;
      }
      const applied = applyWac(state, Number(r.change), r.reason, r.price);
      state = applied.state;
      if (r.day < range.start) opening = state;
      else if (applied.move?.bucket === 'cogs') totals.cogs += applied.move.cost;
      else if (applied.move?.bucket === 'purchases') totals.purchases += applied.move.cost;
    }
    close();
    after = rows[rows.length - 1].item_id;
  }
  return totals;
}

const WINDOWS = [
  { label: '30 days', range: { start: addDays(END_DAY, -29), end: END_DAY } },
  { label: '12 months', range: { start: addDays(END_DAY, -(HISTORY_DAYS - 1)), end: END_DAY } },
];

type Result = { rows: number; window: string; name: string; p50: number; p95: number; n: number };

export async function benchAnalytics(): Promise<void> {
  await createDatabases(benchUrl());
  const client = new pg.Client({ connectionString: benchUrl() });
  await client.connect();
  const results: Result[] = [];
  try {
    for (const rows of [10_000, 1_000_000]) {
      let t = performance.now();
      await load(client, rows);
      const loadMs = performance.now() - t;
      const orm = await openOrm(benchUrl(), 4);
      try {
        t = performance.now();
        const rebuilt = await rebuildRollups(orm.em.fork());
        const rebuildMs = performance.now() - t;
        const [{ n }] = await orm.em
          .fork()
          .execute<{ n: string }[]>('select count(*) as n from analytics_item_day');
        console.log(
          `analytics bench: ${rows} history rows loaded in ${(loadMs / 1000).toFixed(1)} s; rebuild ${rebuilt.events} events -> ${n} item-day rollup rows in ${(rebuildMs / 1000).toFixed(1)} s`,
        );
        await orm.em.fork().execute('vacuum analyze');
        const em = () => orm.em.fork();
        for (const { label, range } of WINDOWS) {
          const add = async (name: string, iterations: number, fn: () => Promise<unknown>) =>
            results.push({ rows, window: label, ...(await measure(name, iterations, fn)) });
          await add('dashboard summary (rollups)', 50, () => dashboardSummary(em(), range, null));
          await add('financial summary (rollups)', 50, () => financialSummary(em(), range, null));
          if (rows === 1_000_000) {
            await add('dashboard summary (naive, raw history)', 10, () => naiveDashboard(em(), range));
            await add('financial summary (naive, raw history)', 3, () => naiveFinancial(em(), range));
          }
        }
      } finally {
        await orm.close(true);
      }
    }
  } finally {
    await client.end();
  }
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`.padStart(11);
  console.log(
    `\nAnalytics (${ITEMS} items, ${SUPPLIERS} suppliers, one year of history), in-process query time:`,
  );
  console.log(
    `${'answer'.padEnd(42)}${'window'.padStart(11)}${'rows'.padStart(10)}${'p50'.padStart(11)}${'p95'.padStart(11)}`,
  );
  for (const r of results)
    console.log(
      `${r.name.padEnd(42)}${r.window.padStart(11)}${String(r.rows).padStart(10)}${fmt(r.p50)}${fmt(r.p95)}`,
    );
  const get = (name: string, window: string, rows: number) =>
    results.find(r => r.name === name && r.window === window && r.rows === rows);
  for (const { label } of WINDOWS)
    for (const what of ['dashboard summary', 'financial summary']) {
      const small = get(`${what} (rollups)`, label, 10_000);
      const big = get(`${what} (rollups)`, label, 1_000_000);
      const naive = get(`${what} (naive, raw history)`, label, 1_000_000);
      if (small && big && naive)
        console.log(
          `${what}, ${label}: 10^6 / 10^4 p50 = ${(big.p50 / small.p50).toFixed(2)}x (target <= 2x); naive / rollups at 10^6 p50 = ${(naive.p50 / big.p50).toFixed(0)}x (target >= 100x)`,
        );
    }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchAnalytics();
