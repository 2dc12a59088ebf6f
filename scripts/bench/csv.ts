import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { hashPassword } from '../../domain/users/passwords.js';
import { issueToken } from '../../domain/users/tokens.js';
import { createDatabases } from '../create-databases.js';
import { printTable } from './support.js';
import {
  freePort,
  processTree,
  procfileEnv,
  rssOf,
  runRelease,
  startProcfileProcess,
  waitForLogLine,
  waitUntilServing,
  type BenchProcess,
  stopOnInterrupt,
} from './processes.js';
import { runScript } from '../run-script.js';
import { holdMachineForBench } from './machine-lock.js';

/**
 * CSV and streamed-list bench (figures, not assertions), against a web process and a worker process of
 * their own so that each process's RSS is its own: export of 10^6 history rows as CSV and as the unpaged
 * JSON list (rows/s, idle and peak RSS; BENCH_CSV_HISTORY_ROWS=0 skips it), then the web process's RSS while it
 * receives an upload just under IMPORT_MAX_BYTES (streamed from here, cancelled once stored), then imports of
 * items with all six columns as users write them (name, sku, quantity, price, supplier, minimum; ~57 bytes a
 * row) at 10^4, 10^5 and 10^6 rows (BENCH_CSV_IMPORT_ROWS, comma-separated): dry runs of new items, real runs
 * of them, and real runs that count every one of them anew (updates), each with rows/s, the time spent
 * applying and the worker's peak RSS (BENCH_CSV_RUNS picks some of the three). Before a real run the consumers drain the
 * events of the previous one (at most BENCH_CSV_DRAIN_SECONDS), so runs do not share the machine with them.
 * The processes are the Procfile's lines exactly as written (processes.ts: its `release` line, then `web` and
 * `worker` from the build, NODE_ENV=production, logs in a temporary directory), so each RSS (of the process
 * tree) is the one a deployment would see: no tsx loader, and none of its transpiled sources and source maps.
 * BENCH_WEB_NODE_OPTIONS and BENCH_WORKER_NODE_OPTIONS are the processes' NODE_OPTIONS (a profile:
 * BENCH_WORKER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof").
 * `npm run bench:csv`, or standalone `npm run build && npx tsx scripts/bench/csv.ts` (BENCH_DATABASE_URL).
 */
const HISTORY_ROWS = Number(process.env.BENCH_CSV_HISTORY_ROWS ?? 1_000_000);
const IMPORT_SIZES = (process.env.BENCH_CSV_IMPORT_ROWS ?? '10000,100000,1000000').split(',').map(Number);
/** The upload whose web RSS is measured: just under the default IMPORT_MAX_BYTES (0 skips it). */
const UPLOAD_BYTES = Number(process.env.BENCH_CSV_UPLOAD_BYTES ?? 104857600 - 1024);
const DRAIN_SECONDS = Number(process.env.BENCH_CSV_DRAIN_SECONDS ?? 300);
const DATABASE_URL = `${process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom_bench'}_csv`;
const JWT_SECRET = 'bench-secret-that-is-long-enough-0123456789';

/** A Procfile process's environment with the bench's extra node flags for it, if any, as NODE_OPTIONS. */
function withNodeOptions(
  env: NodeJS.ProcessEnv,
  variable: 'BENCH_WEB_NODE_OPTIONS' | 'BENCH_WORKER_NODE_OPTIONS',
): NodeJS.ProcessEnv {
  const options = process.env[variable];
  return options ? { ...env, NODE_OPTIONS: options } : env;
}

const rssMb = (proc: BenchProcess): number => proc.rss() / 1024 / 1024;

/**
 * Samples the RSS of a process's tree every 20 ms while `work` runs; answers the peak. The tree is walked once
 * (walking /proc every 20 ms would take a good part of a core): the Procfile's line execs node, which starts
 * no processes of its own.
 */
async function peakRss<T>(proc: BenchProcess, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  const members = processTree(proc.pid);
  const sample = () => rssOf(members) / 1024 / 1024;
  let peak = sample();
  const timer = setInterval(() => (peak = Math.max(peak, sample())), 20);
  try {
    return { result: await work(), peak };
  } finally {
    clearInterval(timer);
  }
}

/** Downloads `url` without keeping it: bytes and line ends counted as they arrive. */
async function drain(url: string, auth: string): Promise<{ bytes: number; lines: number }> {
  const res = await fetch(url, { headers: { Authorization: auth } });
  if (!res.ok || !res.body) throw new Error(`${url}: ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  return { bytes, lines };
}

async function prepareDatabase(env: NodeJS.ProcessEnv, releaseLog: string): Promise<{ auth: string }> {
  await createDatabases(DATABASE_URL);
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query('drop schema if exists public cascade; create schema public;');
  await client.end();
  await runRelease(env, releaseLog);
  const services = await openServices(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  try {
    const em = services.orm.em.fork();
    await em.execute(
      `insert into app_user (username, email, password_hash, full_name, role) values ('bench-admin', 'bench@example.test', ?, 'Bench', 'ROLE_ADMIN')`,
      [await hashPassword('bench-password')],
    );
    await em.execute(
      `insert into supplier (name, created_by) select 'Supplier ' || n, 'bench' from generate_series(0, ?) n`,
      [SUPPLIERS - 1],
    );
    const started = Date.now();
    // 10^6 rows through the table's indexes and count triggers can take longer than the pool's statement
    // timeout on a busy machine: lifted for this transaction only.
    if (HISTORY_ROWS > 0)
      await em.transactional(async tx => {
        await tx.execute('set local statement_timeout = 0');
        await tx.execute(
          `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
                                    quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
         select n, md5(n::text)::uuid, 'History item ' || (n % 5000), null, 'Bench supplier', 1, n % 1000,
                n % 1000 + 1, 'RESTOCK', 1.25, 'bench@example.test', timestamptz '2026-01-01' + n * interval '1 second'
           from generate_series(1, ?) n`,
          [HISTORY_ROWS],
        );
      });
    console.log(`loaded ${HISTORY_ROWS} history rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const token = await issueToken({ sub: 'bench-admin', role: 'ROLE_ADMIN' }, JWT_SECRET, 3600);
    return { auth: `Bearer ${token}` };
  } finally {
    await closeServices(services);
  }
}

/** Posts `file` as an import and polls its state every 100 ms: total and applying seconds, the report. */
async function timedImport(base: string, auth: string, file: Buffer, dryRun: boolean) {
  const started = Date.now();
  const send = () =>
    fetch(`${base}/api/inventory/import?dryRun=${dryRun}`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'text/csv' },
      body: file,
    });
  // A kept-alive connection the server closed meanwhile fails at once: sent again on a new one.
  const post = await send().catch(send);
  if (post.status !== 202) throw new Error(`import: ${post.status} ${await post.text()}`);
  const { jobId } = (await post.json()) as { jobId: string };
  let applyingSince: number | undefined;
  for (;;) {
    const status = (await (
      await fetch(`${base}/api/inventory/import/${jobId}`, { headers: { Authorization: auth } })
    ).json()) as { state: string; report: Record<string, number> | null };
    if (status.state === 'applying') applyingSince ??= Date.now();
    if (['completed', 'failed', 'cancelled'].includes(status.state)) {
      const now = Date.now();
      return {
        seconds: (now - started) / 1000,
        applying: applyingSince === undefined ? undefined : (now - applyingSince) / 1000,
        report: status.report ?? {},
        state: status.state,
      };
    }
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

/** Waits (bounded) until no outbox event is pending for any consumer; answers the seconds waited. */
async function drainOutbox(): Promise<number> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  const started = Date.now();
  try {
    while (Date.now() - started < DRAIN_SECONDS * 1000) {
      const { rows } = await client.query<{ pending: boolean }>(
        'select exists (select 1 from outbox_pending where done_at is null) as pending',
      );
      if (!rows[0].pending) break;
      await new Promise(resolve => setTimeout(resolve, 500));
    }
  } finally {
    await client.end();
  }
  return (Date.now() - started) / 1000;
}

const SUPPLIERS = 20;
const COLOURS = ['red', 'green', 'blue', 'black', 'white', 'yellow', 'grey', 'orange'];

/**
 * A file of `rows` items as users write them (names and skus unique per size; all six columns): about 57 bytes
 * a row. `shift` changes every quantity, so a file imported again with another shift counts every item anew
 * (an update and an event per row).
 */
function importFile(rows: number, shift = 0): Buffer {
  const tag = String.fromCharCode(97 + Math.round(Math.log10(rows)));
  const lines = ['name,sku,quantity,price,supplierName,minimumQuantity'];
  for (let i = 0; i < rows; i++)
    lines.push(
      `Item ${tag}${i} ${COLOURS[i % COLOURS.length]} steel,${tag.toUpperCase()}-${String(i).padStart(8, '0')},` +
        `${((i + shift) % 500) + 1},${(i % 97) + 1}.${String(i % 100).padStart(2, '0')},` +
        `Supplier ${i % SUPPLIERS},${i % 25}`,
    );
  return Buffer.from(lines.join('\n') + '\n');
}

/** `bytes` of CSV lines (a header and rows of about 100 bytes), made as the upload asks for them. */
async function* generatedUpload(bytes: number): AsyncGenerator<Buffer> {
  const header = 'name,quantity,price,supplierName\n';
  yield Buffer.from(header);
  let sent = header.length;
  for (let block = 0; sent < bytes; block++) {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) lines.push(`Upload ${block}-${i} ${'x'.repeat(70)},1,1.00,Supplier 0\n`);
    const chunk = Buffer.from(lines.join('')).subarray(0, bytes - sent);
    sent += chunk.length;
    yield chunk;
  }
}

/**
 * The web process's RSS while it receives an upload of `bytes` (streamed from here, never held whole); the
 * import is cancelled once stored.
 */
async function benchUpload(base: string, auth: string, web: BenchProcess, bytes: number) {
  const idle = rssMb(web);
  const started = Date.now();
  const { result, peak } = await peakRss(web, async () => {
    const post = await fetch(`${base}/api/inventory/import?dryRun=true`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'text/csv', 'Content-Length': String(bytes) },
      body: Readable.toWeb(Readable.from(generatedUpload(bytes))),
      duplex: 'half',
    });
    return { status: post.status, body: (await post.json()) as { jobId?: string } };
  });
  const seconds = (Date.now() - started) / 1000;
  if (result.body.jobId)
    await fetch(`${base}/api/inventory/import/${result.body.jobId}`, {
      method: 'DELETE',
      headers: { Authorization: auth },
    });
  printTable('Upload of a file just under IMPORT_MAX_BYTES to the web process (POST to 202)', [
    {
      MB: (bytes / 1024 / 1024).toFixed(1),
      status: result.status,
      seconds: seconds.toFixed(1),
      'web idle RSS MB': idle.toFixed(0),
      'web peak RSS MB': peak.toFixed(0),
      'growth MB': (peak - idle).toFixed(0),
    },
  ]);
}

async function benchImports(base: string, auth: string, worker: BenchProcess) {
  const imports: Record<string, string | number>[] = [];
  const runs = [
    ['dry run', 'new items', true, 0],
    ['real run', 'new items', false, 0],
    ['real run', 'items counted anew', false, 1],
  ] as const;
  // BENCH_CSV_RUNS picks runs by number (`0,1`: the dry run and the real run of new items).
  const picked = (process.env.BENCH_CSV_RUNS ?? '0,1,2').split(',').map(Number);
  for (const [label, what, dryRun, shift] of runs.filter((_, n) => picked.includes(n)))
    for (const rows of IMPORT_SIZES) {
      const file = importFile(rows, shift);
      const drained = dryRun ? 0 : await drainOutbox();
      const idle = rssMb(worker);
      const { result, peak } = await peakRss(worker, () => timedImport(base, auth, file, dryRun));
      imports.push({
        what: `${label}, ${rows} ${what} (${(file.length / 1024 / 1024).toFixed(1)} MB)`,
        state: result.state,
        seconds: result.seconds.toFixed(1),
        'rows/s': Math.round(rows / result.seconds),
        'applying s': result.applying === undefined ? '-' : result.applying.toFixed(1),
        created: result.report.created ?? 0,
        updated: result.report.updated ?? 0,
        rejected: result.report.rejectedCount ?? 0,
        'worker idle RSS MB': idle.toFixed(0),
        'worker peak RSS MB': peak.toFixed(0),
        'drained before s': drained.toFixed(0),
      });
      console.log(JSON.stringify(imports.at(-1)));
    }
  printTable('CSV imports of items (POST to job finished; worker process of its own)', imports);
}

export async function benchCsv(): Promise<void> {
  holdMachineForBench();
  const logDir = mkdtempSync(path.join(tmpdir(), 'stockroom-bench-csv-'));
  const log = (name: string) => path.join(logDir, `${name}.log`);
  const port = await freePort();
  const env = procfileEnv(DATABASE_URL, port, JWT_SECRET);
  const { auth } = await prepareDatabase(env, log('release'));
  const base = `http://127.0.0.1:${port}`;
  const processes: BenchProcess[] = [];
  const interruptible = stopOnInterrupt(processes);
  try {
    const web = startProcfileProcess('web', withNodeOptions(env, 'BENCH_WEB_NODE_OPTIONS'), log('web'));
    processes.push(web);
    const worker = startProcfileProcess(
      'worker',
      withNodeOptions(env, 'BENCH_WORKER_NODE_OPTIONS'),
      log('worker'),
    );
    processes.push(worker);
    await Promise.all([
      waitUntilServing(web, `${base}/api/health`),
      waitForLogLine(worker, log('worker'), '"workers started"'),
    ]);
    console.log(`web and worker started as the Procfile's lines, logs in ${logDir}`);
    await drain(`${base}/api/inventory`, auth);
    const rows: Record<string, string | number>[] = [];
    if (HISTORY_ROWS > 0) {
      for (const [label, path] of [
        ['CSV export of the history', '/api/stock-history/export.csv'],
        ['JSON list GET /api/stock-history', '/api/stock-history'],
      ]) {
        // Idle = the process's RSS just before this download (the heap an earlier run grew is not returned).
        const idle = rssMb(web);
        const started = Date.now();
        const { result, peak } = await peakRss(web, () => drain(`${base}${path}`, auth));
        const seconds = (Date.now() - started) / 1000;
        rows.push({
          what: `${label} (${HISTORY_ROWS} rows)`,
          seconds: seconds.toFixed(1),
          'rows/s': Math.round(HISTORY_ROWS / seconds),
          MB: (result.bytes / 1024 / 1024).toFixed(0),
          'idle RSS MB': idle.toFixed(0),
          'peak RSS MB': peak.toFixed(0),
          'growth MB': (peak - idle).toFixed(0),
        });
      }
      printTable('Streaming 10^6 history rows from the web process (own child process)', rows);
    }

    if (UPLOAD_BYTES > 0) await benchUpload(base, auth, web, UPLOAD_BYTES);
    await benchImports(base, auth, worker);
  } finally {
    await interruptible.finish();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  await runScript(async () =>
    benchCsv().catch(error => {
      console.error(error, (error as { cause?: unknown }).cause);
      throw error;
    }),
  );
