import { loadavg } from 'node:os';
import pg from 'pg';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { createDatabases } from '../create-databases.js';
import { computeReplenishment } from '../../domain/replenishment/compute-replenishment.js';
import { pageSuggestions } from '../../domain/replenishment/page-suggestions.js';
import { benchDatabaseUrl, printTable, resetBenchDatabase } from './support.js';

/**
 * The replenishment run and the suggestions at scale (figures, never assertions): ITEMS items of 20 suppliers, each with SALE rollup rows on
 * about one day in three and a RESTOCK row on one day in ten over the last 120 days (the window reads the last
 * 56), generated in SQL. Times the run (the worker's use case, in this process) and the suggestions's read (the domain
 * query, without HTTP). The database is WIPED: BENCH_DATABASE_URL, default `stockroom_bench_replenishment`.
 */
const benchUrl = () => process.env.BENCH_DATABASE_URL ?? benchDatabaseUrl('stockroom_bench_replenishment');

async function load(items: number): Promise<number> {
  await createDatabases(benchUrl());
  const client = new pg.Client({ connectionString: benchUrl() });
  await client.connect();
  try {
    await resetBenchDatabase(client, benchUrl());
    await client.query(`
      insert into supplier (id, name, created_by, lead_time_days)
      select ('00000000-0000-4000-8000-' || lpad(s::text, 12, '0'))::uuid, 'Supplier ' || s, 'bench',
             case when s % 4 = 0 then null else 2 + s % 20 end
      from generate_series(1, 20) s`);
    await client.query(`
      insert into inventory_item (id, name, quantity, price, minimum_quantity, supplier_id, created_by, created_at)
      select ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid, 'Item ' || g, (g * 37) % 400,
             1 + (g % 500), (g % 7) * 5,
             ('00000000-0000-4000-8000-' || lpad((1 + g % 20)::text, 12, '0'))::uuid, 'bench',
             now() - interval '200 days'
      from generate_series(1, ${items}) g`);
    await client.query(`
      insert into analytics_reason_day (item_id, day, supplier_key, reason, item_name, entries, increase, decrease)
      select i.id, current_date - d, i.supplier_id, r.reason, i.name, 1,
             case when r.reason = 'RESTOCK' then 50 else (d * 7 + g) % 5 end,
             case when r.reason = 'SALE' then 1 + (g * 13 + d * 31) % 40 else 0 end
      from generate_series(1, ${items}) g
      join inventory_item i on i.id = ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid
      cross join generate_series(0, 119) d
      cross join (values ('SALE'), ('RESTOCK')) r(reason)
      where (r.reason = 'SALE' and (g + d) % 3 = 0) or (r.reason = 'RESTOCK' and (g + d) % 10 = 0)`);
    await client.query('vacuum analyze');
    const [{ n }] = (await client.query('select count(*)::int as n from analytics_reason_day')).rows;
    return n;
  } finally {
    await client.end();
  }
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function scaleBench(items: number): Promise<void> {
  const rollupRows = await load(items);
  const services = await openServices(
    loadConfig({ ...process.env, DATABASE_URL: benchUrl(), LOG_LEVEL: 'silent' }),
  );
  try {
    const settings = services.config.replenishment;
    const runs: Record<string, string | number>[] = [];
    for (let round = 1; round <= 2; round++) {
      const before = process.memoryUsage().rss;
      const started = performance.now();
      const result = await computeReplenishment(services.orm.em.fork(), settings);
      runs.push({
        round,
        items,
        'rollup rows': rollupRows,
        'run s': ((performance.now() - started) / 1000).toFixed(2),
        suggestions: result.suggestions,
        'RSS MB (process)': Math.round(process.memoryUsage().rss / 2 ** 20),
        'RSS growth MB': Math.round((process.memoryUsage().rss - before) / 2 ** 20),
        'load average': loadavg()[0].toFixed(1),
      });
    }
    printTable(`R2: replenishment run at ${items} items`, runs);
    const reads: Record<string, string | number>[] = [];
    const cases: [string, Parameters<typeof pageSuggestions>[2]][] = [
      ['first page, every supplier', {}],
      ['one supplier', { supplierId: '00000000-0000-4000-8000-000000000003' }],
      ['due within 7 days', { dueWithinDays: 7 }],
    ];
    // Right after the run (its item rows rewritten, not yet all-visible), then after the VACUUM that
    // autovacuum makes of them (this machine runs without it): the count reads the due index alone.
    for (const state of ['right after the run', 'after VACUUM ANALYZE']) {
      if (state !== 'right after the run')
        await services.orm.em.fork().execute('vacuum analyze inventory_item');
      for (const [name, filter] of cases) {
        const times: number[] = [];
        let total = 0;
        for (let i = 0; i < 21; i++) {
          const started = performance.now();
          const page = await pageSuggestions(services.orm.em.fork(), settings, filter, {
            page: 0,
            size: 50,
            sort: [],
          });
          times.push(performance.now() - started);
          total = page.totalElements;
        }
        reads.push({
          state,
          read: name,
          rows: total,
          'p50 ms': p50(times).toFixed(1),
          'max ms': Math.max(...times).toFixed(1),
          'load average': loadavg()[0].toFixed(1),
        });
      }
    }
    printTable(`R1: suggestions at ${items} items (domain query, no HTTP)`, reads);
  } finally {
    await closeServices(services);
  }
}

// Run alone (`tsx scripts/bench/replenishment-scale.ts`): the scale part without the backtest.
if (import.meta.url === `file://${process.argv[1]}`)
  await scaleBench(Number(process.env.REPLENISHMENT_BENCH_ITEMS ?? 100_000));
