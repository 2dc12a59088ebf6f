import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabases } from '../create-databases.js';
import { issueToken } from '../../domain/users/tokens.js';
import { runScript } from '../run-script.js';
import { backendCpuMs, backendCpuSince } from './backend-cpu.js';
import { benchReplicaReads } from './replica-reads.js';
import {
  mb,
  runRelease,
  startProcfileProcess,
  startShellProcess,
  waitForLogLine,
  waitUntilServing,
  runLoad as load,
  loadGenerator,
  type BenchProcess,
  type LoadResult,
  type LoadSpec,
  freePort,
  procfileEnv,
  stopOnInterrupt,
} from './processes.js';
import { holdMachineForBench } from './machine-lock.js';

/**
 * Inventory benchmark (figures, never assertions), on BENCH_DATABASE_URL. Every party runs in its own process:
 * - Stockroom's web and worker processes, started exactly as the Procfile's `web` and `worker` lines
 *   (compiled output, NODE_ENV=production, RUN_WORKERS=false on the web line), after its `release` line;
 * - the bare baseline (scripts/bench/bare.ts: Express 5 + pg, the same SQL);
 * - the load generator, one child process per run: wrk where installed (scripts/bench/wrk.lua), else autocannon
 *   (scripts/bench/load.ts); BENCH_LOAD chooses.
 * After a warm-up it runs BENCH_ROUNDS (5; >= 3) alternating rounds of BENCH_SECONDS (>= 10) per side for
 * GET /api/inventory/{id}, PATCH /api/inventory/{id}/quantity with the worker draining its events, the PATCH
 * with an Idempotency-Key, the PATCH again with the worker paused (the request path alone), and
 * prints each round, the median ratios, p99 latencies and the RSS of every process tree (idle, end of the read
 * load, worker while draining the write backlog). BENCH_SOAK_MINUTES=n (or `npm run bench:soak`) runs a
 * sustained read + write load instead and prints the web RSS every minute. BENCH_REPLICA=1 appends the replica
 * run (scripts/bench/replica-reads.ts: analytics reads on a replica against the primary while writes run);
 * BENCH_ONLY=replica runs it alone.
 */
export async function benchInventory(): Promise<void> {
  holdMachineForBench();
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom_bench';
  const seconds = Math.max(1, Number(process.env.BENCH_SECONDS ?? 10));
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  // BENCH_ONLY=replica: the replica run alone (a primary and a replica of its own; BENCH_REPLICA=1 appends it).
  if (process.env.BENCH_ONLY === 'replica') return benchReplicaReads({ rounds, seconds, connections });
  const soakMinutes = Number(process.env.BENCH_SOAK_MINUTES ?? 0);
  const logDir = mkdtempSync(path.join(tmpdir(), 'stockroom-bench-'));
  const log = (name: string) => path.join(logDir, `${name}.log`);

  await createDatabases(databaseUrl);
  const [webPort, barePort] = [await freePort(), await freePort()];
  const jwtSecret = randomBytes(32).toString('hex');
  const env = procfileEnv(databaseUrl, webPort, jwtSecret);
  await runRelease(env, log('release'));
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const processes: BenchProcess[] = [];
  const interruptible = stopOnInterrupt(processes);
  const sampler = new RssSampler();
  try {
    const { username, itemIds } = await seed(db);
    await vacuum(db);
    const auth = `Bearer ${await issueToken({ sub: username, role: 'ROLE_USER' }, jwtSecret, 3600 * 4)}`;

    // BENCH_WEB_NODE_OPTIONS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` or `--heapsnapshot-signal=SIGUSR2`.
    const webOptions = process.env.BENCH_WEB_NODE_OPTIONS;
    const web = startProcfileProcess(
      'web',
      webOptions ? { ...env, NODE_OPTIONS: webOptions } : env,
      log('web'),
    );
    const worker = startProcfileProcess('worker', env, log('worker'));
    // BENCH_BARE_COMMAND: an A/B run of two Stockroom builds. The baseline side runs this command instead of
    // the bare server (e.g. another checkout's web line, `cd /tmp/old && node ... dist/scripts/start-all.js
    // --web`) with Stockroom's environment on the baseline's port.
    const abCommand = process.env.BENCH_BARE_COMMAND;
    const bare = abCommand
      ? startShellProcess(
          'bare',
          abCommand,
          {
            ...env,
            RUN_WORKERS: 'false',
            PORT: String(barePort),
            PUBLIC_URL: `http://127.0.0.1:${barePort}`,
          },
          log('bare'),
        )
      : startShellProcess(
          'bare',
          'node dist/scripts/bench/bare.js',
          {
            ...process.env,
            DATABASE_URL: databaseUrl,
            PORT: String(barePort),
            DB_POOL_MAX: '10',
            // BENCH_BARE_NODE_OPTIONS: the same, for the bare baseline (compare profiles).
            ...(process.env.BENCH_BARE_NODE_OPTIONS
              ? { NODE_OPTIONS: process.env.BENCH_BARE_NODE_OPTIONS }
              : {}),
          },
          log('bare'),
        );
    processes.push(web, worker, bare);
    const ours = `http://127.0.0.1:${webPort}`;
    const theirs = `http://127.0.0.1:${barePort}`;
    await Promise.all([
      waitUntilServing(web, `${ours}/api/health`),
      waitUntilServing(bare, `${theirs}/api/health`),
      waitForLogLine(worker, log('worker'), '"workers started"'),
    ]);
    await pause(3000);
    const idle = { web: web.rss(), worker: worker.rss(), bare: bare.rss() };
    console.log(
      `\n## Inventory bench: ${rounds} alternating rounds x ${seconds} s, ${connections} connections, ` +
        `database ${new URL(databaseUrl).pathname.slice(1)}, load generator ${loadGenerator}, logs in ${logDir}`,
    );
    console.log(`web:    ${web.child.spawnargs.at(-1)}`);
    console.log(`worker: ${worker.child.spawnargs.at(-1)}`);
    console.log(
      `idle RSS (process trees): web ${mb(idle.web)}, worker ${mb(idle.worker)}, bare ${mb(idle.bare)}`,
    );
    sampler.start({ web, worker, bare });

    const headers = { authorization: auth };
    const getPaths = itemIds.map(id => `/api/inventory/${id}`);
    const patchPaths = itemIds.map(id => `/api/inventory/${id}/quantity?delta=1&reason=RESTOCK`);
    if (soakMinutes > 0) {
      await soak({ ours, headers, getPaths, patchPaths, connections, minutes: soakMinutes, web, worker });
      return;
    }

    let heapAtReadEnd = '';
    // BENCH_ONLY=read|write: one part only (profiling).
    const only = process.env.BENCH_ONLY;
    const none = { ours: [] as LoadResult[], bare: [] as LoadResult[] };
    const read =
      only === 'write'
        ? none
        : await compare('GET /api/inventory/{id}', rounds, seconds, {
            ours: { url: ours, paths: getPaths, headers, connections },
            bare: { url: theirs, paths: getPaths, connections, ...(abCommand ? { headers } : {}) },
            servers: { ours: web, bare },
            db,
            onBareEnd: () => sampler.mark('bare read'),
            onOursEnd: () => {
              sampler.mark('read');
              // BENCH_HEAP_SNAPSHOT=1 (with BENCH_WEB_NODE_OPTIONS="--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=...").
              if (process.env.BENCH_HEAP_SNAPSHOT) web.signalNode('SIGUSR2');
              void heapFigures(ours).then(figures => (heapAtReadEnd = figures));
            },
          });
    // Each side's peak RSS over the read phase (warm-up and rounds): one sample 0.5 s before a round ends
    // catches the bare server anywhere between two of its collections (136-197 MB in runs of the same build).
    const readPeak = { ...sampler.max };
    // The write path twice: with the worker draining the events on the same cores (the whole system: the bare
    // side's events have their pending rows too, and the worker's sweeper wakes the consumers for them within a
    // second), and the request path alone (the worker process paused).
    const writeSides = {
      ours: { url: ours, paths: patchPaths, headers, method: 'PATCH' as const, connections },
      bare: {
        url: theirs,
        paths: patchPaths,
        method: 'PATCH' as const,
        connections,
        ...(abCommand ? { headers } : {}),
      },
      servers: { ours: web, bare },
      db,
    };
    if (only !== 'read') await vacuum(db);
    const writeDraining =
      only === 'read'
        ? none
        : await compare('PATCH /api/inventory/{id}/quantity (worker draining)', rounds, seconds, {
            ...writeSides,
            worker,
          });
    const idempotent: LoadResult[] = [];
    for (let round = 1; round <= (only ? 0 : rounds); round++) {
      const result = await measured(
        {
          url: ours,
          paths: patchPaths,
          headers,
          method: 'PATCH',
          connections,
          seconds,
          uniqueHeaders: { 'idempotency-key': `bench-${randomUUID().slice(0, 8)}` },
        },
        web,
        db,
      );
      idempotent.push(result);
      console.log(`  round ${round}: stockroom with Idempotency-Key ${describe(result)}`);
    }
    // Last, so the worker resumes with the paused rounds' events as a backlog to drain (its RSS below).
    let write = none;
    if (only !== 'read') {
      await vacuum(db);
      worker.signalNode('SIGSTOP');
      try {
        write = await compare(
          'PATCH /api/inventory/{id}/quantity (worker paused)',
          rounds,
          seconds,
          writeSides,
        );
      } finally {
        worker.signalNode('SIGCONT');
      }
    }
    const drained = await drainBacklog(db, sampler);

    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const bareWrite = median(writeDraining.bare.map(r => r.rate));
    console.log('\n## Summary (medians)');
    const summary = [];
    if (read.ours.length > 0) summary.push(row('GET item', read.ours, read.bare));
    if (write.ours.length > 0) summary.push(row('PATCH quantity, worker paused', write.ours, write.bare));
    if (writeDraining.ours.length > 0)
      summary.push(row('PATCH quantity, worker draining', writeDraining.ours, writeDraining.bare));
    if (idempotent.length > 0 && writeDraining.bare.length > 0)
      summary.push({
        path: 'PATCH + Idempotency-Key',
        'stockroom req/s': Math.round(median(idempotent.map(r => r.rate))),
        'bare req/s': Math.round(bareWrite),
        ratio: (median(idempotent.map(r => r.rate)) / bareWrite).toFixed(2),
        'stockroom p99 ms': median(idempotent.map(r => r.p99)),
        'bare p99 ms': median(writeDraining.bare.map(r => r.p99)),
        'stockroom cpu µs/req': median(idempotent.map(r => r.cpuUs ?? 0)),
        'bare cpu µs/req': median(writeDraining.bare.map(r => r.cpuUs ?? 0)),
      });
    console.table(summary);
    // Each side's RSS at the end of its OWN read load (the last round of each).
    const endOfRead = { ...sampler.marked('read'), bare: sampler.marked('bare read').bare };
    console.table([
      {
        process: 'web (Procfile web)',
        idle: mb(idle.web),
        'end of read load': mb(endOfRead.web),
        max: mb(sampler.max.web),
      },
      {
        process: 'bare',
        idle: mb(idle.bare),
        'end of read load': mb(endOfRead.bare),
        max: mb(sampler.max.bare),
      },
      {
        process: 'worker (Procfile worker)',
        idle: mb(idle.worker),
        'end of read load': mb(endOfRead.worker),
        max: mb(sampler.max.worker),
      },
    ]);
    console.log(`web process memory at the end of the read load (its /metrics): ${heapAtReadEnd}`);
    console.log(
      `web RSS under read load / bare RSS: ${(endOfRead.web / endOfRead.bare).toFixed(2)} at the end of each ` +
        `side's last read round, ${(readPeak.web / readPeak.bare).toFixed(2)} at their peaks ` +
        `(${mb(readPeak.web)} / ${mb(readPeak.bare)}); ` +
        `worker drained ${drained.events} events in ${(drained.ms / 1000).toFixed(1)} s, ` +
        `max worker RSS while draining ${mb(drained.maxWorkerRss)}`,
    );
  } finally {
    sampler.stop();
    processes.find(p => p.name === 'worker')?.signalNode('SIGCONT');
    await interruptible.finish();
    await db.end();
  }
  if (process.env.BENCH_REPLICA === '1') await benchReplicaReads({ rounds, seconds, connections });
}

/**
 * {@link load} while measuring the CPU time `server` spends per request, and that of the PostgreSQL backends
 * serving it (both sides share the two cores with PostgreSQL and the load generator, so all three decide the
 * request rate); likewise for `worker` and its backends when given (it drains the run's events on the same
 * cores: what each side's writes cost the whole system).
 */
async function measured(
  spec: LoadSpec,
  server: BenchProcess,
  db: pg.Pool,
  worker?: BenchProcess,
): Promise<LoadResult> {
  const before = server.cpuMs();
  const backendsBefore = await backendCpuMs(db, server.pid);
  const workerBefore = worker?.cpuMs();
  const workerBackendsBefore = worker && (await backendCpuMs(db, worker.pid));
  const result = await load(spec);
  const cpuMs = server.cpuMs() - before;
  const pgMs = backendCpuSince(backendsBefore, await backendCpuMs(db, server.pid));
  const perRequest = (ms: number) => Math.round((ms * 1000) / Math.max(1, result.total));
  const measures: LoadResult = { ...result, cpuUs: perRequest(cpuMs), pgCpuUs: perRequest(pgMs) };
  if (worker && workerBefore !== undefined && workerBackendsBefore) {
    measures.workerCpuUs = perRequest(worker.cpuMs() - workerBefore);
    measures.workerPgCpuUs = perRequest(
      backendCpuSince(workerBackendsBefore, await backendCpuMs(db, worker.pid)),
    );
  }
  return measures;
}

const describe = (r: LoadResult) =>
  `${r.rate.toFixed(0).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms` +
  (r.cpuUs === undefined ? '' : `  cpu ${r.cpuUs} µs/req`) +
  (r.pgCpuUs === undefined ? '' : ` (+pg ${r.pgCpuUs}, load gen ${r.loadCpuUs})`) +
  (r.workerCpuUs === undefined ? '' : `  worker ${r.workerCpuUs} µs/req (+pg ${r.workerPgCpuUs})`) +
  (r.non2xx + r.errors > 0 ? `  (non-2xx ${r.non2xx}, errors ${r.errors})` : '');

/** Warm-up, then `rounds` alternating rounds (ours first on odd rounds, bare first on even ones). */
async function compare(
  title: string,
  rounds: number,
  seconds: number,
  sides: {
    ours: Omit<LoadSpec, 'seconds'>;
    bare: Omit<LoadSpec, 'seconds'>;
    servers: { ours: BenchProcess; bare: BenchProcess };
    db: pg.Pool;
    /** The worker draining both sides' events, measured with each round. */
    worker?: BenchProcess;
    onOursEnd?: () => void;
    /** Called 0.5 s before each bare round ends (its RSS under its own load). */
    onBareEnd?: () => void;
  },
): Promise<{ ours: LoadResult[]; bare: LoadResult[] }> {
  console.log(`\n### ${title}`);
  await load({ ...sides.ours, seconds: 3 });
  await load({ ...sides.bare, seconds: 3 });
  const ours: LoadResult[] = [];
  const bare: LoadResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    const runOurs = async () => {
      const timer = sides.onOursEnd ? setTimeout(sides.onOursEnd, seconds * 1000 - 500) : undefined;
      ours.push(await measured({ ...sides.ours, seconds }, sides.servers.ours, sides.db, sides.worker));
      clearTimeout(timer);
    };
    const runBare = async () => {
      const timer = sides.onBareEnd ? setTimeout(sides.onBareEnd, seconds * 1000 - 500) : undefined;
      bare.push(await measured({ ...sides.bare, seconds }, sides.servers.bare, sides.db, sides.worker));
      clearTimeout(timer);
    };
    if (round % 2 === 1) {
      await runOurs();
      await runBare();
    } else {
      await runBare();
      await runOurs();
    }
    const [o, b] = [ours.at(-1)!, bare.at(-1)!];
    console.log(
      `  round ${round}: stockroom ${describe(o)} | bare ${describe(b)} | ratio ${(o.rate / b.rate).toFixed(2)}`,
    );
  }
  return { ours, bare };
}

function row(label: string, ours: LoadResult[], bare: LoadResult[]) {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const ratios = ours.map((o, i) => o.rate / bare[i].rate);
  return {
    path: label,
    'stockroom req/s': Math.round(median(ours.map(r => r.rate))),
    'bare req/s': Math.round(median(bare.map(r => r.rate))),
    ratio: median(ratios).toFixed(2),
    'stockroom p99 ms': median(ours.map(r => r.p99)),
    'bare p99 ms': median(bare.map(r => r.p99)),
    'stockroom cpu µs/req': median(ours.map(r => r.cpuUs ?? 0)),
    'bare cpu µs/req': median(bare.map(r => r.cpuUs ?? 0)),
  };
}

type Sides = { web: BenchProcess; worker: BenchProcess; bare: BenchProcess };
type Rss = { web: number; worker: number; bare: number };

/** Samples every process tree's RSS twice a second: maxima, the latest sample, and named marks. */
class RssSampler {
  max: Rss = { web: 0, worker: 0, bare: 0 };
  latest: Rss = { web: 0, worker: 0, bare: 0 };
  private marks = new Map<string, Rss>();
  private timer: NodeJS.Timeout | undefined;
  private sides: Sides | undefined;

  start(sides: Sides): void {
    this.sides = sides;
    this.timer = setInterval(() => this.sample(), 500);
  }

  sample(): Rss {
    if (!this.sides) return this.latest;
    const now = { web: this.sides.web.rss(), worker: this.sides.worker.rss(), bare: this.sides.bare.rss() };
    for (const key of ['web', 'worker', 'bare'] as const) this.max[key] = Math.max(this.max[key], now[key]);
    this.latest = now;
    return now;
  }

  /** Records the current sample under `name` (the last mark of a name wins). */
  mark(name: string): void {
    this.marks.set(name, this.sample());
  }

  marked(name: string): Rss {
    return this.marks.get(name) ?? this.latest;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Waits (bounded) until every consumer has caught up with the bench's writes, sampling the worker's RSS. */
async function drainBacklog(
  db: pg.Pool,
  sampler: RssSampler,
): Promise<{ events: number; ms: number; maxWorkerRss: number }> {
  const pending = async () =>
    Number(
      (
        await db.query<{ n: string }>(
          'select count(distinct id) as n from outbox_pending where done_at is null',
        )
      ).rows[0].n,
    );
  const started = Date.now();
  const events = await pending();
  let maxWorkerRss = sampler.sample().worker;
  while (Date.now() - started < 180000) {
    maxWorkerRss = Math.max(maxWorkerRss, sampler.sample().worker);
    if ((await pending()) === 0) break;
    await pause(250);
  }
  return { events, ms: Date.now() - started, maxWorkerRss };
}

/** Sustained read + write load (half the connections each), printing the web RSS every minute. */
async function soak(options: {
  ours: string;
  headers: Record<string, string>;
  getPaths: string[];
  patchPaths: string[];
  connections: number;
  minutes: number;
  web: BenchProcess;
  worker: BenchProcess;
}): Promise<void> {
  const half = Math.max(1, Math.floor(options.connections / 2));
  console.log(`\n### Soak: ${options.minutes} min of GET + PATCH (${half} connections each)`);
  console.log(`  minute 0: web RSS ${mb(options.web.rss())}, worker RSS ${mb(options.worker.rss())}`);
  for (let minute = 1; minute <= options.minutes; minute++) {
    const [reads, writes] = await Promise.all([
      load({
        url: options.ours,
        paths: options.getPaths,
        headers: options.headers,
        connections: half,
        seconds: 60,
      }),
      load({
        url: options.ours,
        paths: options.patchPaths,
        headers: options.headers,
        method: 'PATCH',
        connections: half,
        seconds: 60,
      }),
    ]);
    console.log(
      `  minute ${minute}: web RSS ${mb(options.web.rss())}, worker RSS ${mb(options.worker.rss())}; ` +
        `GET ${reads.rate.toFixed(0)} req/s (p99 ${reads.p99} ms), PATCH ${writes.rate.toFixed(0)} req/s ` +
        `(p99 ${writes.p99} ms), failures ${reads.non2xx + reads.errors + writes.non2xx + writes.errors}`,
    );
  }
}

/**
 * VACUUM of the tables the writes churn, before each write phase. A production server's autovacuum does this
 * continuously; without it (this machine's PostgreSQL runs with autovacuum off) every phase ran on the dead
 * rows of the ones before, and the bare side's write rate fell from ~4,800/s to ~1,400/s within one run.
 */
async function vacuum(db: pg.Pool): Promise<void> {
  await db.query('vacuum inventory_item, outbox_event');
}

async function seed(db: pg.Pool): Promise<{ username: string; itemIds: string[] }> {
  const username = `bench-${randomUUID().slice(0, 8)}`;
  await db.query(`insert into app_user (username, email, full_name, role) values ($1, $2, $3, 'ROLE_USER')`, [
    username,
    `${username}@bench.test`,
    'Bench user',
  ]);
  const {
    rows: [supplier],
  } = await db.query<{ id: string }>(`insert into supplier (name, created_by) values ($1, $2) returning id`, [
    `Bench supplier ${username}`,
    username,
  ]);
  const itemIds: string[] = [];
  for (let i = 0; i < 50; i++) {
    const { rows } = await db.query<{ id: string }>(
      `insert into inventory_item (name, quantity, price, supplier_id, created_by)
       values ($1, 1000, 9.99, $2, $3) returning id`,
      [`Bench item ${username} ${i}`, supplier.id, username],
    );
    itemIds.push(rows[0].id);
  }
  return { username, itemIds };
}

/** The V8 heap figures of prom-client's default metrics, in MB. */
async function heapFigures(base: string): Promise<string> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (name: string) => {
      const match = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
      return match ? `${(Number(match[1]) / 1048576).toFixed(0)} MB` : '?';
    };
    return (
      `rss ${value('process_resident_memory_bytes')}, heap total ${value('nodejs_heap_size_total_bytes')}, ` +
      `heap used ${value('nodejs_heap_size_used_bytes')}, external ${value('nodejs_external_memory_bytes')}`
    );
  } catch (error) {
    return `unavailable (${(error as Error).message})`;
  }
}

const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

if (import.meta.url === `file://${process.argv[1]}`) await runScript(benchInventory);
