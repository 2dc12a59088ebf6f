import { loadavg } from 'node:os';
import pg from 'pg';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { createDatabases } from '../create-databases.js';
import { migrate, openOrm } from '../../config/database.js';
import { computeReplenishment } from '../../domain/replenishment/compute-replenishment.js';
import { fillCatalog, fillHistory } from './history-fill.js';
import { benchDatabaseUrl, printTable, resetBenchDatabase } from './support.js';

/**
 * The replenishment run on a database of the `bench:history` shape (figures, never assertions): the history filled in SQL as
 * bench:history fills it (2,000 items moving over three years, 20 suppliers) to HISTORY entries (default 10^7),
 * the catalogue topped up to ITEMS items (default 10^5; the others without history), and the daily reason
 * rollup folded from that history in one SQL statement (as the rebuild's fold sums it: per item, UTC day,
 * supplier and reason). Filled once: a database that already holds the history is reused
 * (REPLENISHMENT_HISTORY_FRESH=1 refills). Then the run (the worker's use case) in this process, sampling its
 * RSS. Database: REPLENISHMENT_HISTORY_DATABASE_URL, default `stockroom_bench_replenishment_history`.
 */
const url = () =>
  process.env.REPLENISHMENT_HISTORY_DATABASE_URL ?? benchDatabaseUrl('stockroom_bench_replenishment_history');

async function fill(entries: number, items: number): Promise<void> {
  await createDatabases(url());
  const client = new pg.Client({ connectionString: url() });
  await client.connect();
  try {
    const filled = await client
      .query<{ n: string }>('select count(*) as n from stock_history')
      .then(r => Number(r.rows[0].n))
      .catch(() => -1);
    if (filled === entries && process.env.REPLENISHMENT_HISTORY_FRESH !== '1') {
      // Reused: brought up to the current migrations.
      const orm = await openOrm(url(), 2);
      await migrate(orm);
      await orm.close(true);
      return;
    }
    await resetBenchDatabase(client, url());
  } finally {
    await client.end();
  }
  const db = new pg.Pool({ connectionString: url(), max: 2 });
  try {
    await fillCatalog(db);
    await fillHistory(db, entries, done => console.log(`history: ${done.toLocaleString('en')} entries`));
    await db.query(
      `insert into inventory_item (name, quantity, price, minimum_quantity, supplier_id, created_by, created_at)
       select 'other ' || n, (n * 37) % 400, 1 + n % 500, (n % 7) * 5, s.ids[1 + n % 20], 'bench',
              now() - interval '400 days'
       from generate_series(1, $1::int - (select count(*)::int from inventory_item)) n,
            (select array_agg(id order by id) as ids from supplier) s`,
      [items],
    );
    await db.query(`
      insert into analytics_reason_day (item_id, day, supplier_key, reason, item_name, entries, increase, decrease)
      select item_id, ("timestamp" at time zone 'UTC')::date, supplier_id, reason, min(item_name), count(*),
             coalesce(sum(change) filter (where change > 0), 0), coalesce(-sum(change) filter (where change < 0), 0)
      from stock_history group by 1, 2, 3, 4`);
    await db.query('vacuum analyze');
  } finally {
    await db.end();
  }
}

export async function historyBench(entries: number, items: number): Promise<void> {
  const started = performance.now();
  await fill(entries, items);
  console.log(`database ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const services = await openServices(
    loadConfig({ ...process.env, DATABASE_URL: url(), LOG_LEVEL: 'silent' }),
  );
  try {
    const [{ rollups, window }] = await services.orm.em.fork().execute<{ rollups: number; window: number }[]>(
      `select count(*)::int as rollups, count(*) filter (where day > current_date - ?)::int as window
         from analytics_reason_day`,
      [services.config.replenishment.demandDays],
    );
    const rows: Record<string, string | number>[] = [];
    for (let round = 1; round <= 2; round++) {
      let peak = process.memoryUsage().rss;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
      const runStarted = performance.now();
      const result = await computeReplenishment(services.orm.em.fork(), services.config.replenishment);
      clearInterval(sampler);
      rows.push({
        round,
        items,
        'history entries': entries,
        'rollup rows (in the window)': `${rollups} (${window})`,
        'run s': ((performance.now() - runStarted) / 1000).toFixed(2),
        suggestions: result.suggestions,
        'peak RSS MB (run process)': Math.round(peak / 2 ** 20),
        'load average': loadavg()[0].toFixed(1),
      });
    }
    printTable(`R2 on the bench:history shape`, rows);
  } finally {
    await closeServices(services);
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  await historyBench(
    Number(process.env.REPLENISHMENT_HISTORY_ENTRIES ?? 10_000_000),
    Number(process.env.REPLENISHMENT_BENCH_ITEMS ?? 100_000),
  );
