import pg from 'pg';
import { openOrm } from '../config/database.js';
import { createDatabases } from './create-databases.js';
import { checkIntegrity } from '../domain/stock-history/check-integrity.js';
import { itemAsOf } from '../domain/inventory/item-as-of.js';
import { inventoryValueAsOf } from '../domain/inventory/inventory-value-as-of.js';
import { benchDatabaseUrl, printTable, ratio, resetBenchDatabase } from './bench-support.js';

/**
 * Ledger benchmark (figures, never assertions): the integrity check's rate (entries/s) and this process's RSS
 * while it runs, and the point-in-time reads (one item, the whole inventory's value) at each history size. The
 * shop is fixed (1,000 items, 20 suppliers, one year); a larger history is a busier shop. History, item changes
 * and the latest-day rollups are generated in SQL (generate_series), consistent with each other, so a healthy
 * check reports no drift. Sizes: LEDGER_BENCH_SIZES (default 100000,10000000). The database is WIPED:
 * BENCH_DATABASE_URL, default `stockroom_bench_ledger` on DATABASE_URL's server.
 */
const ITEMS = 1000;
const SUPPLIERS = 20;
const DAYS = 365;
const END_MS = Date.parse('2026-11-21T23:59:59Z');

const benchUrl = () => process.env.BENCH_DATABASE_URL ?? benchDatabaseUrl('stockroom_bench_ledger');

/** Per item, event k: k = 0 -> +100 INITIAL_STOCK; k % 3 = 0 -> +30 RESTOCK; else -10 SALE (never below 80). */
async function load(client: pg.Client, rows: number): Promise<void> {
  await resetBenchDatabase(client, benchUrl());
  const stepMs = (DAYS * 86400000) / rows;
  await client.query(`
    insert into supplier (id, name, created_by)
    select ('00000000-0000-4000-8000-' || lpad(s::text, 12, '0'))::uuid, 'Supplier ' || s, 'bench'
    from generate_series(1, ${SUPPLIERS}) s`);
  await client.query(`
    create unlogged table bench_events as
    select g, ('00000000-0000-4000-9000-' || lpad(i::text, 12, '0'))::uuid as item, i, k,
           ('00000000-0000-4000-8000-' || lpad((i % ${SUPPLIERS} + 1)::text, 12, '0'))::uuid as sup,
           case when k = 0 then 100 when k % 3 = 0 then 30 else -10 end as ch,
           100 + 40 * (k / 3) - 10 * k as q,
           case when k = 0 then 'INITIAL_STOCK' when k % 3 = 0 then 'RESTOCK' else 'SALE' end as reason,
           (5 + (i % 50) * 0.25 + (k / 30) * 0.05)::numeric(12, 2) as price,
           to_timestamp((${END_MS} - (${rows} - g)::float8 * ${stepMs}) / 1000) as ts
    from (select g, (g - 1) % ${ITEMS} as i, (g - 1) / ${ITEMS} as k from generate_series(1, ${rows}) g) x`);
  await client.query(`
    insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
      quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
    select g, item, 'Item ' || i, sup, 'Supplier ' || (i % ${SUPPLIERS} + 1), ch, q - ch, q, reason, price,
           'bench', ts from bench_events order by g`);
  await client.query(`
    insert into item_change (item_id, kind, version, at, name, sku, quantity, price, minimum_quantity, supplier_id)
    select item, case when k = 0 then 'created' else 'updated' end, k + 1, ts, 'Item ' || i, null, q, price, 10, sup
      from bench_events order by g`);
  await client.query(`
    insert into inventory_item (id, name, quantity, price, minimum_quantity, supplier_id, created_by, version)
    select distinct on (item) item, 'Item ' || i, q, price, 10, sup, 'bench', k + 1
      from bench_events order by item, g desc`);
  // The rollups the check compares with: each item's closing state per day (the consumer's day rows).
  await client.query(`
    insert into analytics_item_day (item_id, day, supplier_key, supplier_name, item_name, closing_quantity,
      closing_price, wac_q, wac_c, last_event_id)
    select distinct on (item, (ts at time zone 'UTC')::date) item, (ts at time zone 'UTC')::date, sup,
           'Supplier ' || (i % ${SUPPLIERS} + 1), 'Item ' || i, q, price, q, price, g
      from bench_events order by item, (ts at time zone 'UTC')::date, g desc`);
  await client.query('drop table bench_events');
  await client.query('vacuum analyze');
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function timed(iterations: number, fn: (i: number) => Promise<unknown>) {
  for (let i = 0; i < Math.min(10, iterations); i++) await fn(i);
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

export async function benchLedger(): Promise<void> {
  const sizes = (process.env.LEDGER_BENCH_SIZES ?? '100000,10000000').split(',').map(Number);
  await createDatabases(benchUrl());
  const client = new pg.Client({ connectionString: benchUrl() });
  await client.connect();
  const rows: Record<string, string | number>[] = [];
  try {
    for (const size of sizes) {
      const loadStarted = Date.now();
      await load(client, size);
      const loadSeconds = (Date.now() - loadStarted) / 1000;
      const orm = await openOrm(benchUrl(), 4);
      try {
        const em = orm.em.fork();
        const baseRss = process.memoryUsage().rss;
        let peakRss = baseRss;
        const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
        const started = performance.now();
        const result = await checkIntegrity(em);
        const seconds = (performance.now() - started) / 1000;
        clearInterval(sampler);
        const span = DAYS * 86400000;
        const instant = (i: number) => new Date(END_MS - ((i * 7919) % 1000) * (span / 1000)).toISOString();
        const item = (i: number) => `00000000-0000-4000-9000-${String((i * 37) % ITEMS).padStart(12, '0')}`;
        // An instant before an item existed answers 404 (NotFoundError), as fast as any other.
        const one = await timed(300, i => itemAsOf(em, item(i), instant(i)).catch(() => null));
        const value = await timed(30, i => inventoryValueAsOf(em, { asOf: instant(i) }));
        rows.push({
          entries: size,
          'load s': loadSeconds.toFixed(0),
          'check entries/s': Math.round(result.checkedEntries / seconds),
          'check s': seconds.toFixed(1),
          drift: result.drift.length,
          'RSS base MB': Math.round(baseRss / 2 ** 20),
          'RSS peak MB': Math.round(peakRss / 2 ** 20),
          'item asOf p50 ms': one.p50.toFixed(2),
          'item asOf p95 ms': one.p95.toFixed(2),
          'value asOf p50 ms': value.p50.toFixed(1),
          'value asOf p95 ms': value.p95.toFixed(1),
        });
      } finally {
        await orm.close(true);
      }
    }
  } finally {
    await client.end();
  }
  printTable('Ledger: integrity check and point-in-time reads by history size (1,000 items)', rows);
  if (rows.length > 1) {
    const [first, last] = [rows[0], rows[rows.length - 1]];
    console.log(
      `item asOf p50 ${last.entries}/${first.entries}: ${ratio(Number(last['item asOf p50 ms']), Number(first['item asOf p50 ms']))}x; ` +
        `value asOf p50: ${ratio(Number(last['value asOf p50 ms']), Number(first['value asOf p50 ms']))}x`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLedger();
