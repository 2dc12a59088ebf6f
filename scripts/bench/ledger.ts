import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { requestIntegrityCheck } from '../../domain/stock-history/request-integrity-check.js';
import { getJobStatus } from '../../domain/analytics/rebuild/get-rebuild-status.js';
import { startProcfileProcess, treeRss, waitForLogLine } from './processes.js';
import { createDatabases } from '../create-databases.js';
import { itemAsOf } from '../../domain/inventory/item-as-of.js';
import { inventoryValueAsOf } from '../../domain/inventory/inventory-value-as-of.js';
import { benchDatabaseUrl, printTable, ratio, resetBenchDatabase } from './support.js';
import type { SqlRun } from '../../domain/shared/native-transaction.js';
import { holdMachineForBench } from './machine-lock.js';

/**
 * Ledger benchmark (figures, never assertions): the integrity check's rate (entries/s) and the RSS of the
 * worker running it (the Procfile's `worker` line from the build: `npm run build` first), and the point-in-time reads (one item, the whole inventory's value) at each history size. The
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

/**
 * Runs one integrity check as the system does: the worker process of the Procfile takes the job from its queue.
 * Returns the check's rate (entries over the job's own run time) and the worker's RSS idle and at its peak.
 */
async function checkInWorker(databaseUrl: string) {
  const env = {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: `bench-ledger-${randomUUID().slice(0, 8)}`,
    JWT_SECRET: randomUUID() + randomUUID(),
    SESSION_SECRET: randomUUID(),
    LOG_LEVEL: 'info',
    SEED_DEMO_DATA: 'false',
  };
  const services = await openServices(loadConfig({ ...process.env, ...env }));
  const log = path.join(tmpdir(), `bench-ledger-worker-${randomUUID()}.log`);
  const worker = startProcfileProcess('worker', { ...process.env, ...env }, log);
  try {
    await waitForLogLine(worker, log, '"workers started"');
    const idle = treeRss(worker.pid);
    let peak = idle;
    const jobId = await requestIntegrityCheck(services.queues, 'bench');
    for (;;) {
      peak = Math.max(peak, treeRss(worker.pid));
      const status = await getJobStatus(services.queues, 'integrity', 'integrity-', jobId, 'not found');
      if (status.state === 'failed')
        throw new Error(`integrity check failed: ${JSON.stringify(status.result)}`);
      if (status.state === 'completed') {
        const result = status.result as { checkedEntries: number; drift: unknown[] };
        const seconds = (Date.parse(status.finishedAt!) - Date.parse(status.startedAt!)) / 1000;
        return { entries: result.checkedEntries, seconds, drift: result.drift.length, idle, peak };
      }
      await new Promise(resolve => setTimeout(resolve, 50));
    }
  } finally {
    await worker.stop();
    await closeServices(services);
  }
}

/** Statements on one connection whose search_path is a kept dataset's schema (the use cases run on any Db). */
const onSchema = async (url: string, schema: string) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`set search_path = ${schema}`);
  const run: SqlRun = async <T>(text: string, params: unknown[] = []) =>
    (await client.query(text, params)).rows as T[];
  return { run, end: () => client.end() };
};

const ROUNDS = 5;

export async function benchLedger(): Promise<void> {
  holdMachineForBench();
  const sizes = (process.env.LEDGER_BENCH_SIZES ?? '100000,10000000').split(',').map(Number);
  await createDatabases(benchUrl());
  const client = new pg.Client({ connectionString: benchUrl() });
  await client.connect();
  const rows: Record<string, string | number>[] = [];
  const reads = new Map<number, { one: number[]; value: number[] }>();
  try {
    for (const { nspname } of (
      await client.query<{ nspname: string }>(
        "select nspname from pg_namespace where nspname like 'ledger_bench_%'",
      )
    ).rows)
      await client.query(`drop schema ${nspname} cascade`);
    for (const size of sizes) {
      const loadStarted = Date.now();
      await load(client, size);
      const loadSeconds = (Date.now() - loadStarted) / 1000;
      const check = await checkInWorker(benchUrl());
      // Each dataset is kept in a schema of its own, so the reads of all sizes can alternate (rounds below).
      await client.query(`alter schema public rename to ledger_bench_${size}; create schema public`);
      reads.set(size, { one: [], value: [] });
      rows.push({
        entries: size,
        'load s': loadSeconds.toFixed(0),
        'check entries/s': Math.round(check.entries / check.seconds),
        'check s': check.seconds.toFixed(1),
        drift: check.drift,
        'worker RSS idle MB': Math.round(check.idle / 2 ** 20),
        'worker RSS peak MB': Math.round(check.peak / 2 ** 20),
      });
    }
    const span = DAYS * 86400000;
    const instant = (i: number) => new Date(END_MS - ((i * 7919) % 1000) * (span / 1000)).toISOString();
    const item = (i: number) => `00000000-0000-4000-9000-${String((i * 37) % ITEMS).padStart(12, '0')}`;
    for (let round = 0; round < ROUNDS; round++)
      for (const size of sizes) {
        const db = await onSchema(benchUrl(), `ledger_bench_${size}`);
        try {
          // An instant before an item existed answers 404 (NotFoundError), as fast as any other.
          const one = await timed(200, i =>
            itemAsOf(db.run, item(i + round), instant(i + round)).catch(() => null),
          );
          const value = await timed(20, i => inventoryValueAsOf(db.run, { asOf: instant(i + round) }));
          reads.get(size)!.one.push(one.p50);
          reads.get(size)!.value.push(value.p50);
        } finally {
          await db.end();
        }
      }
  } finally {
    await client.end();
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  for (const row of rows) {
    const r = reads.get(Number(row.entries))!;
    row['item asOf p50 ms (median of rounds)'] = median(r.one).toFixed(3);
    row['value asOf p50 ms (median of rounds)'] = median(r.value).toFixed(2);
  }
  printTable(
    `Ledger: integrity check in the worker, point-in-time reads in ${ROUNDS} alternating rounds (1,000 items)`,
    rows,
  );
  if (rows.length > 1) {
    const [first, last] = [rows[0], rows[rows.length - 1]];
    const key = (what: string) => `${what} asOf p50 ms (median of rounds)`;
    console.log(
      `${last.entries} against ${first.entries} entries: item asOf ${ratio(Number(last[key('item')]), Number(first[key('item')]))}x, ` +
        `value asOf ${ratio(Number(last[key('value')]), Number(first[key('value')]))}x`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLedger();
