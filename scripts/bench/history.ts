import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createDatabases } from '../create-databases.js';
import { issueToken } from '../../domain/users/tokens.js';
import { runScript } from '../run-script.js';
import { historyExportRows } from '../../domain/stock-history/stock-history-queries.js';
import { copyCsvSql, inlineParams } from '../../domain/shared/csv-copy.js';
import { HISTORY_CSV_COPY_COLUMNS } from '../../domain/stock-history/history-csv.js';
import { fillCatalog, fillHistory, type FillShape } from './history-fill.js';
import {
  mb,
  runRelease,
  startProcfileProcess,
  waitForLogLine,
  waitUntilServing,
  type BenchProcess,
  freePort,
  procfileEnv,
} from './processes.js';
import { holdMachineForBench } from './machine-lock.js';

/**
 * History benchmark (figures, never assertions), on BENCH_DATABASE_URL (default stockroom_bench_history;
 * BENCH_HISTORY_FRESH=1 drops and recreates it first, so the first size can be filled). Stockroom's web and
 * worker processes run exactly as the Procfile's `web` and `worker` lines (compiled output, after its `release`
 * line). For each size of BENCH_HISTORY_SIZES (default 100000,10000000; a size the history already exceeds is
 * skipped) it fills the history in SQL (2,000 items, 20 suppliers, three years; BENCH_HISTORY_SHAPE `spread`, the
 * default, or `daily`: every item every day, 5x10^6 entries by default, database stockroom_bench_history_daily;
 * see history-fill.ts), VACUUM ANALYZEs, and prints:
 * every history read of issue 28 (p50 and p99 over BENCH_HISTORY_REQUESTS requests, 20 by default, fewer for
 * the unpaged whole-reason read), a cursor walk, the CSV export of one supplier and of the whole history
 * (curl into /dev/null) against `COPY ... TO STDOUT` (psql into /dev/null) of the same rows, as stored (with a
 * header), and of the export's own statement under its session settings (BENCH_HISTORY_EXPORT_ROUNDS
 * alternating rounds, 3 by default, medians) with the web process's RSS growth, the report rebuild (entries/s,
 * worker peak RSS, whether its progress only rose) and three analytics reads. BENCH_HISTORY_PARTS (default
 * `reads,exports,rebuild`) runs only some of them.
 */
export async function benchHistory(): Promise<void> {
  holdMachineForBench();
  const databaseUrl =
    process.env.BENCH_DATABASE_URL ??
    `postgres://postgres@127.0.0.1:5432/stockroom_bench_history${process.env.BENCH_HISTORY_SHAPE === 'daily' ? '_daily' : ''}`;
  const shape = (process.env.BENCH_HISTORY_SHAPE ?? 'spread') as FillShape;
  if (shape !== 'spread' && shape !== 'daily')
    throw new Error(`BENCH_HISTORY_SHAPE: spread or daily, not ${shape}`);
  const sizes = (process.env.BENCH_HISTORY_SIZES ?? (shape === 'daily' ? '5000000' : '100000,10000000'))
    .split(',')
    .map(Number);
  const requests = Math.max(3, Number(process.env.BENCH_HISTORY_REQUESTS ?? 20));
  const parts = new Set((process.env.BENCH_HISTORY_PARTS ?? 'reads,exports,rebuild').split(','));
  const logDir = mkdtempSync(path.join(tmpdir(), 'stockroom-bench-history-'));
  const log = (name: string) => path.join(logDir, `${name}.log`);

  if (process.env.BENCH_HISTORY_FRESH === '1') await recreateDatabase(databaseUrl);
  await createDatabases(databaseUrl);
  const port = await freePort();
  const jwtSecret = randomBytes(32).toString('hex');
  const env = procfileEnv(databaseUrl, port, jwtSecret);
  await runRelease(env, log('release'));
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const processes: BenchProcess[] = [];
  try {
    const supplierIds = await fillCatalog(db);
    const admin = `bench-admin-${randomUUID().slice(0, 8)}`;
    await db.query(
      `insert into app_user (username, email, full_name, role) values ($1, $2, $3, 'ROLE_ADMIN')`,
      [admin, `${admin}@bench.test`, 'Bench admin'],
    );
    const auth = `Bearer ${await issueToken({ sub: admin, role: 'ROLE_ADMIN' }, jwtSecret, 3600 * 6)}`;
    const web = startProcfileProcess('web', env, log('web'));
    const worker = startProcfileProcess('worker', env, log('worker'));
    processes.push(web, worker);
    const base = `http://127.0.0.1:${port}`;
    await waitUntilServing(web, `${base}/api/health`);
    await waitForLogLine(worker, log('worker'), 'workers started');
    console.log(`history bench: logs in ${logDir}; machine shared, figures noisy`);

    for (const size of sizes) {
      const {
        rows: [{ n }],
      } = await db.query<{ n: string }>('select count(*) as n from stock_history');
      if (Number(n) > size) {
        console.log(`\n${size} entries: skipped, the history already holds ${n} (BENCH_HISTORY_FRESH=1)`);
        continue;
      }
      const fillStart = Date.now();
      await fillHistory(db, size, undefined, shape);
      await db.query(
        'vacuum analyze stock_history, history_count_hour, history_count_day, history_count_month, history_count_item',
      );
      await db.query('vacuum analyze history_item_name, inventory_item, supplier');
      console.log(
        `\n## ${size.toLocaleString('en')} entries, ${shape} shape (filled and vacuumed in ${secs(Date.now() - fillStart)}; load average ${loadavg()
          .map(l => l.toFixed(1))
          .join(' ')})`,
      );
      const get = (url: string) => timed(`${base}${url}`, auth);
      const item = await itemIdOf(db, 'item 42');
      const supplier = supplierIds[3];
      const today = new Date();
      const monthAgo = new Date(today.getTime() - 30 * 86_400_000);
      const table: [string, Timing][] = [];
      const row = async (name: string, url: string, count = requests) =>
        table.push([name, await repeat(count, () => get(url))]);
      const analyticsRow = async (name: string, url: string) =>
        analytics.push([name, await repeat(requests, () => get(url))]);
      if (parts.has('reads')) {
        await row('H1 page=0&size=20', '/api/stock-history?page=0&size=20');
        await row('H1 page=2000&size=50', '/api/stock-history?page=2000&size=50');
        await row('H1 page=200&size=50 (10,000 deep)', '/api/stock-history?page=200&size=50');
        await row('H4 itemName=item 7&size=50', '/api/stock-history/search?itemName=item%207&size=50');
        await row('H4 page=1000&size=50', '/api/stock-history/search?page=1000&size=50');
        await row(
          'H4 supplier, last 30 days',
          `/api/stock-history/search?supplierId=${supplier}&startDate=${monthAgo.toISOString()}&endDate=${today.toISOString()}`,
        );
        await row('H2 item (unpaged, streamed)', `/api/stock-history/item/${item}`);
        await row('H2 item size=50', `/api/stock-history/item/${item}?size=50`);
        await row('H3 DAMAGED size=50', '/api/stock-history/reason/DAMAGED?size=50');
        table.push(['H1 cursor walk, 20 pages of 50 from the front', await cursorWalk(base, auth, 20)]);
        await row(
          'H3 DAMAGED (unpaged, streamed)',
          '/api/stock-history/reason/DAMAGED',
          size > 1e6 ? 3 : requests,
        );
        printTable(table);
      }

      if (parts.has('exports')) {
        const rounds = Math.max(1, Number(process.env.BENCH_HISTORY_EXPORT_ROUNDS ?? 3));
        const rssBefore = web.rss();
        let rssMax = rssBefore;
        const sampler = setInterval(() => (rssMax = Math.max(rssMax, web.rss())), 250);
        for (const [name, filters, rows] of [
          [`supplierId (${(size / 20).toLocaleString('en')} rows)`, { supplierId: supplier }, size / 20],
          [`the whole history (${size.toLocaleString('en')} rows)`, {}, size],
        ] as const) {
          const query = new URLSearchParams(filters).toString();
          const copySql = copyOfExportRows(filters);
          const ownSql = copyCsvSql(HISTORY_CSV_COPY_COLUMNS, historyExportRows(filters), ',');
          const exportRuns: number[] = [];
          const copyRuns: number[] = [];
          const ownRuns: number[] = [];
          let bytes = 0;
          // Alternating rounds: each export next to the COPYs of the same rows, under the same load.
          for (let i = 0; i < rounds; i++) {
            const run = await timeDownload(
              `${base}/api/stock-history/export.csv${query ? `?${query}` : ''}`,
              auth,
            );
            exportRuns.push(run.ms);
            bytes = run.bytes;
            copyRuns.push(await timeCopy(databaseUrl, copySql));
            ownRuns.push(await timeCopy(databaseUrl, ownSql, EXPORT_SESSION));
          }
          const [exportMs, copyMs, ownMs] = [median(exportRuns), median(copyRuns), median(ownRuns)];
          const all = (runs: number[]) => runs.map(ms => secs(ms)).join(', ');
          console.log(
            `export.csv of ${name}, median of ${rounds}: ${secs(exportMs)} (${mb(bytes)}, ${((exportMs * 1000) / rows).toFixed(2)} µs/row) vs COPY TO STDOUT of the stored columns ${secs(copyMs)}: ${(copyMs / exportMs).toFixed(2)} of COPY; vs COPY of the export's own statement (psql) ${secs(ownMs)}: ${(ownMs / exportMs).toFixed(2)} (rounds ${all(exportRuns)} vs ${all(copyRuns)} vs ${all(ownRuns)})`,
          );
        }
        clearInterval(sampler);
        console.log(
          `web RSS over the exports: ${mb(rssBefore)} -> max ${mb(rssMax)} (+${mb(rssMax - rssBefore)})`,
        );
      }
      if (!parts.has('rebuild')) continue;
      await rebuild(base, auth, worker, size);
      // Analytics read the rollups: after the rebuild, which folded the entries the fill wrote in SQL.
      const analytics: [string, Timing][] = [];
      await analyticsRow('N9 summary (30 days)', '/api/analytics/summary');
      await analyticsRow(
        'N11 financial summary (a year)',
        `/api/analytics/financial/summary?from=${isoDay(new Date(today.getTime() - 365 * 86_400_000))}&to=${isoDay(today)}`,
      );
      await analyticsRow('X1 reason breakdown (30 days)', '/api/analytics/reason-breakdown');
      printTable(analytics);
    }
  } finally {
    for (const proc of processes) await proc.stop();
    await db.end();
  }
}

interface Timing {
  ms: number;
  bytes: number;
  status: number;
  link?: string | null;
}

async function timed(url: string, auth: string): Promise<Timing> {
  const start = performance.now();
  const res = await fetch(url, { headers: { Authorization: auth } });
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  const ms = performance.now() - start;
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return { ms, bytes, status: res.status, link: res.headers.get('link') };
}

async function repeat(count: number, once: () => Promise<Timing>): Promise<Timing & { all: number[] }> {
  const all: number[] = [];
  let last: Timing | undefined;
  for (let i = 0; i < count; i++) {
    last = await once();
    all.push(last.ms);
  }
  return { ...last!, all };
}

/** Follows the `Link: <...>; rel="next"` of the history list for `pages` pages; each page is one timing. */
async function cursorWalk(base: string, auth: string, pages: number): Promise<Timing & { all: number[] }> {
  const all: number[] = [];
  let url: string | undefined = '/api/stock-history?size=50';
  let last: Timing | undefined;
  for (let i = 0; i < pages && url; i++) {
    last = await timed(`${base}${url}`, auth);
    all.push(last.ms);
    url = last.link ? /^<([^>]+)>/.exec(last.link)?.[1] : undefined;
  }
  return { ...last!, all };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

function printTable(rows: [string, Timing & { all?: number[] }][]): void {
  console.log('| request | n | p50 ms | p99 ms | bytes |');
  console.log('|---|---|---|---|---|');
  for (const [name, t] of rows) {
    const all = t.all ?? [t.ms];
    console.log(
      `| ${name} | ${all.length} | ${percentile(all, 50).toFixed(1)} | ${percentile(all, 99).toFixed(1)} | ${t.bytes.toLocaleString('en')} |`,
    );
  }
}

/** POST the rebuild, poll it to the end sampling the worker's RSS; prints entries/s and the peak. */
async function rebuild(base: string, auth: string, worker: BenchProcess, size: number): Promise<void> {
  const res = await fetch(`${base}/api/admin/reports/rebuild`, {
    method: 'POST',
    headers: { Authorization: auth },
  });
  const { jobId } = (await res.json()) as { jobId: string };
  const before = worker.rss();
  let peak = before;
  let last = -1;
  let monotonic = true;
  for (;;) {
    peak = Math.max(peak, worker.rss());
    const status = (await (
      await fetch(`${base}/api/admin/reports/rebuild/${jobId}`, { headers: { Authorization: auth } })
    ).json()) as {
      state: string;
      progress: number;
      startedAt?: string;
      finishedAt?: string;
      result?: { events?: number; durationMs?: number; phasesMs?: Record<string, number> } | null;
    };
    if (status.progress < last) monotonic = false;
    last = status.progress;
    if (status.state === 'failed') throw new Error(`rebuild failed: ${JSON.stringify(status.result)}`);
    if (status.state === 'completed') {
      // The job's own figures; its start and finish times when it reports none.
      const events = status.result?.events ?? size;
      const durationMs =
        status.result?.durationMs ?? Date.parse(status.finishedAt!) - Date.parse(status.startedAt!);
      console.log(
        `rebuild: ${events.toLocaleString('en')} events in ${secs(durationMs)}: ${Math.round(events / (durationMs / 1000)).toLocaleString('en')} entries/s; worker RSS ${mb(before)} -> peak ${mb(peak)}; progress ${monotonic ? 'only rose' : 'went back'}${status.result ? '' : ` (job result ${JSON.stringify(status.result)})`}${
          status.result?.phasesMs
            ? `; phases ${Object.entries(status.result.phasesMs)
                .map(([name, ms]) => `${name} ${secs(ms)}`)
                .join(', ')}`
            : ''
        }`,
      );
      return;
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}

/**
 * The database's own CSV of the export's rows: `COPY (select <the exported columns, as stored> <the export's
 * from, filters and order>) TO STDOUT` in CSV with a header. It formats nothing, so the export pays for its
 * cell formatting (timestamps, formula escapes, prices) as well as for its transport.
 */
function copyOfExportRows(filters: { supplierId?: string }): string {
  const columns = `h."timestamp", h.item_id, h.item_name, h.supplier_name, h.change, h.quantity_before,
    h.quantity_after, h.reason, h.price_at_change, h.created_by`;
  return `copy (select ${columns} ${inlineParams(historyExportRows(filters))}) to stdout with (format csv, header)`;
}

const median = (values: number[]) => percentile(values, 50);

const execFileAsync = promisify(execFile);

/** The settings of the export's COPY (RowStreams.copyOut), for psql running the export's own statement. */
const EXPORT_SESSION = '-c timezone=UTC -c datestyle=ISO,YMD';

/** `file` run with `args` to its end: how long it took and what it printed (a few bytes at most). */
async function timedCommand(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ms: number; stdout: string }> {
  const start = performance.now();
  const { stdout } = await execFileAsync(file, args, { env, maxBuffer: 1024 });
  return { ms: performance.now() - start, stdout };
}

/**
 * A download read by curl into /dev/null, as psql reads the COPYs it is set against (timeCopy): the bench's own
 * fetch read a 1.25 GB export at about half the speed the web process sent it on a slow machine, so it timed
 * itself more than the server.
 */
async function timeDownload(url: string, auth: string): Promise<{ ms: number; bytes: number }> {
  const { ms, stdout } = await timedCommand('curl', [
    '-sSf',
    '-o',
    '/dev/null',
    '-H',
    `Authorization: ${auth}`,
    '-w',
    '%{size_download}',
    url,
  ]);
  return { ms, bytes: Number(stdout) };
}

/** Time of psql running `copy ... to stdout` into /dev/null (the database's own speed for the same rows). */
async function timeCopy(databaseUrl: string, copy: string, options = ''): Promise<number> {
  const { ms } = await timedCommand('sh', ['-c', `psql "$URL" -qAtc "$SQL" > /dev/null`], {
    ...process.env,
    URL: databaseUrl,
    SQL: copy,
    PGOPTIONS: options,
  });
  return ms;
}

async function itemIdOf(db: pg.Pool, name: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>('select id from inventory_item where name = $1', [name]);
  return rows[0].id;
}

async function recreateDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  } finally {
    await admin.end();
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

if (import.meta.url === `file://${process.argv[1]}`) await runScript(benchHistory);
