import { writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDatabases } from '../create-databases.js';
import { runScript } from '../run-script.js';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { migrate } from '../../config/database.js';
import { issueToken } from '../../domain/users/tokens.js';
import { OUTBOX_CONSUMERS } from '../../domain/outbox/consumers.js';
import { CONSUMER_BATCH } from '../../domain/outbox/drain-consumer.js';
import { cpuCap, type CpuCap, type Throttling } from './cpu-cgroup.js';
import { backendCpuMs, backendCpuSince, busyShare, machineCpu } from './backend-cpu.js';
import {
  procfileCommand,
  runLoad,
  startProcfileProcess,
  startShellProcess,
  treeThreadCpuMs,
  waitForLogLine,
  waitUntilServing,
  type BenchProcess,
  stopOnInterrupt,
} from './processes.js';
import { holdMachineForBench } from './machine-lock.js';

/**
 * The event pipeline benchmark (figures, never assertions). Every server runs in its own process as the
 * Procfile runs it (`web` with RUN_WORKERS=false, `worker`), the load generator (autocannon) in a third:
 *
 * 1. max write rate: PATCH /quantity on 2,000 items of 20 suppliers at 50 connections with NO worker running,
 *    which also leaves the backlog (written on until it holds about BENCH_DRAIN_MIN_EVENTS events);
 * 2. drain: ONE worker process (started before the writes, warmed up on a short backlog of BENCH_WARM_UP_SECONDS
 *    (3) of writes, stopped while the measured backlog is written) goes on; events/s per
 *    consumer from the first marker set to its last, and the ratio to the max write rate of the same round
 *    (goal: >= 5x, one worker keeps up with five web processes);
 * 3. the same with a fresh backlog and TWO worker processes, warmed up on a backlog twice as large (share of time the consumers waited on heavyweight
 *    locks, and the statements most often seen waiting on a lock or a shared-memory lock, with what for);
 *    1-3 alternate for BENCH_DRAIN_ROUNDS rounds (4: each order as often), and the ratios are printed per round
 *    with their medians;
 * 4. lag at half the max write rate with one worker running, paced evenly (scripts/bench/paced-load.ts; in
 *    BENCH_LAG_ROUNDS windows with their medians) and in autocannon's per-second bursts: commit -> marker per
 *    consumer, p50/p99/max, and the CPU per event of the worker and of the PostgreSQL backends serving it;
 * 5. the API's max write rate with that worker stopped (SIGSTOP) and running, and the worker's CPU per event then;
 *    then the paced lag once more at half the rate reached with the worker running (the whole system's max), in
 *    BENCH_LAG_ROUNDS windows (3) with their medians.
 * Worker RSS is sampled while it drains. Between 3 and 4, the scaling phase (scalingRun): worker processes each
 * in a cgroup of its own capped at a fraction of one core, 1, 2 and 3 of them, on backlogs of >= 100,000 events.
 *
 * Knobs: BENCH_SCALING_ONLY=1 runs only the scaling phase, BENCH_SCALING=0 leaves it out (its own knobs: scalingRun);
 * BENCH_WRITE_SECONDS (write phases), BENCH_DRAIN_MIN_EVENTS (a drain's backlog, 100,000), BENCH_LAG_SECONDS, BENCH_LAG_WARM_UP_SECONDS (20), BENCH_FULL_SECONDS; BENCH_DRAIN_ONLY=1 stops after 1-3; BENCH_LAG_RATE=n runs only
 * the lag part at n writes/s; BENCH_LAG_AB=NAME=a,b runs only the paced lag (at BENCH_LAG_RATE, default 900),
 * alternately with the worker's environment variable NAME set to a and to b, BENCH_AB_ROUNDS times (an A/B in
 * one run: the machine's absolute figures swing ~30% between runs); BENCH_AB_WINDOWS paced windows per arm (1); BENCH_DRAIN_AB=NAME=a,b does the same with
 * the drain part (a backlog written in BENCH_WRITE_SECONDS, then BENCH_AB_PROCESSES worker processes, 1; with 2,
 * an A/B of the two-process drain, e.g. of two builds with BENCH_WORKER_DIR). The lag-only runs
 * (BENCH_LAG_RATE, BENCH_LAG_AB) first write and drain one backlog (prefill), as the full run's drains do before
 * its lag phases. BENCH_WORKER_NODE_OPTIONS is added to the worker processes' NODE_OPTIONS (e.g. an `--import`
 * of a module that watches garbage collection; V8 flags there do not override the Procfile line's own);
 * BENCH_WORKER_NODE_FLAGS is put on the worker line after the Procfile's own flags (any V8 flag, overriding them),
 * e.g. BENCH_LAG_AB=BENCH_WORKER_NODE_FLAGS=,--max-semi-space-size=16 for an A/B of the heap settings.
 */
const ITEMS = 2000;
const SUPPLIERS = 20;

/** A write load's outcome: changes per second and the answers that were not 2xx. */
interface WriteResult {
  rate: number;
  failures: number;
}

/** Writes for `seconds` at `rate` (paced evenly, or autocannon's per-second quota), or as fast as served. */
type Write = (rate?: number, seconds?: number, paced?: boolean) => Promise<WriteResult>;

async function benchEventPipeline(): Promise<void> {
  holdMachineForBench();
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom_bench';
  const writeSeconds = Number(process.env.BENCH_WRITE_SECONDS ?? 15);
  await createDatabases(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  await pool.query('drop schema if exists public cascade; create schema public;');
  const env = {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: `bench-pipe-${randomUUID().slice(0, 8)}`,
    JWT_SECRET: randomUUID() + randomUUID(),
    SESSION_SECRET: randomUUID(),
    LOG_LEVEL: 'warn',
    SEED_DEMO_DATA: 'false',
  };
  const config = loadConfig({ ...process.env, ...env });
  const services = await openServices(config);
  const children: BenchProcess[] = [];
  const interruptible = stopOnInterrupt(children, 2000);
  try {
    await migrate(services.orm);
    const { auth, itemIds } = await seed(pool, config.jwtSecret);
    await closeServices(services);
    const port = 20000 + Math.floor(Math.random() * 20000);
    const web = await startProcess('web', { ...env, PORT: String(port) }, children);
    const base = `http://127.0.0.1:${port}`;
    console.log(
      `pipeline bench: ${ITEMS} items, ${SUPPLIERS} suppliers; web and worker as the Procfile lines; writes ${writeSeconds} s`,
    );

    // A random walk: every request moves a random item by +1 or -1.
    const paths = itemIds.flatMap(id =>
      [-1, 1].map(delta => `/api/inventory/${id}/quantity?delta=${delta}&reason=MANUAL_ADJUSTMENT`),
    );
    const write: Write = async (rate, seconds = writeSeconds, paced = false) => {
      const result = await runLoad({
        url: base,
        method: 'PATCH',
        headers: { authorization: auth },
        paths,
        connections: 50,
        seconds,
        rate,
        paced,
        // autocannon at full speed too: the max write rates (and the lag phases' rates, halves of them) stay
        // comparable with every earlier run of this bench.
        generator: 'autocannon',
      });
      return { rate: result.rate, failures: result.non2xx + result.errors };
    };

    /**
     * A drain's backlog: BENCH_WRITE_SECONDS of writes at full speed, then as many seconds more as the first
     * part's rate says it takes to reach DRAIN_MIN_EVENTS events (an estimate: the second part's rate differs);
     * returns the rate over both.
     */
    const writeBacklog = async (): Promise<WriteResult> => {
      const first = await write();
      const written = first.rate * writeSeconds;
      if (written >= DRAIN_MIN_EVENTS || first.rate <= 0) return first;
      const seconds = Math.ceil((DRAIN_MIN_EVENTS - written) / first.rate);
      const rest = await write(undefined, seconds);
      return {
        rate: (written + rest.rate * seconds) / (writeSeconds + seconds),
        failures: first.failures + rest.failures,
      };
    };

    /**
     * A backlog written at full speed while `processes` worker processes are started but stopped, then drained
     * by them: prints the write rate (as `rateLabel`) and the drain's report.
     */
    const backlogDrain = async (processes: number, workerEnv: Record<string, string>, rateLabel: string) => {
      const workers = await startStopped(processes, workerEnv, children);
      // Warm-up: a short backlog drained by the same processes (JIT, connections, prepared statements), as
      // a worker that has run for a while is; then stopped again for the measured one. As many times larger as
      // there are processes, as in the scaling phase: each then has drained about as much as one process alone
      // (on half of it, two processes still compiled and planned at the measured drain's start).
      if (WARM_UP_SECONDS > 0) {
        await write(undefined, WARM_UP_SECONDS * processes);
        await drain(pool, await maxEventId(pool), workers, 'warm-up');
        for (const worker of workers) worker.signalNode('SIGSTOP');
      }
      await vacuum(pool);
      const mark = await maxEventId(pool);
      const backlog = await writeBacklog();
      console.log(`${rateLabel}: ${backlog.rate.toFixed(0)} changes/s (${backlog.failures} non-2xx)`);
      const run = await drain(pool, mark, workers);
      report(processes === 1 ? '1 worker' : `${processes} workers`, run, backlog.rate);
      return { rate: backlog.rate, run };
    };

    /**
     * For the runs that measure lag alone (BENCH_LAG_RATE, BENCH_LAG_AB): one drain round as the full run's
     * before its lag phases, so that the tables the web and the consumers plan against hold rows and statistics
     * (analysed while nearly empty, the web's writes reached a third less than in a full run, and a rate from a
     * full run saturated it).
     */
    const prefill = () => backlogDrain(1, env, 'prefill: max write rate');

    // An A/B of one worker environment variable: BENCH_LAG_AB (paced lag runs) or BENCH_DRAIN_AB (drain runs).
    const ab = process.env.BENCH_LAG_AB ?? process.env.BENCH_DRAIN_AB;
    if (ab) {
      // The name ends at the first `=`; a value may hold more (e.g. PGOPTIONS).
      const [name, ...rest] = ab.split('=');
      const values = rest.join('=');
      if (process.env.BENCH_LAG_AB) await prefill();
      for (let round = 0; round < Number(process.env.BENCH_AB_ROUNDS ?? 2); round++)
        for (const value of values.split(',')) {
          console.log(`\n=== ${name}=${value} round ${round + 1}`);
          const abEnv = { ...env, [name]: value };
          if (process.env.BENCH_LAG_AB) {
            await lagRun(pool, write, Number(process.env.BENCH_LAG_RATE ?? 900), abEnv, children, AB_WINDOWS);
            continue;
          }
          await backlogDrain(AB_PROCESSES, abEnv, 'max write rate');
        }
      await web.stop();
      return;
    }
    if (process.env.BENCH_SCALING_ONLY === '1') {
      await scalingRun(pool, write, env, children);
      await web.stop();
      return;
    }
    if (process.env.BENCH_LAG_RATE) {
      await prefill();
      await lagRun(pool, write, Number(process.env.BENCH_LAG_RATE), env, children);
      await web.stop();
      return;
    }
    // 1-3: rounds of a backlog at full speed drained by one worker process (started before, stopped while the
    // backlog is written) and a fresh backlog drained by two, in alternating order; medians over the rounds. An
    // even number of rounds by default, so that each order counts as often: with three, two of them drained with
    // two processes second, the position that meets the first drain's leftovers (docs/performance.md).
    const rounds = Number(process.env.BENCH_DRAIN_ROUNDS ?? 4);
    const ones: Awaited<ReturnType<typeof backlogDrain>>[] = [];
    const twos: typeof ones = [];
    for (let round = 1; round <= rounds; round++) {
      console.log(`\n=== drain round ${round} of ${rounds}`);
      // One process first on odd rounds, two first on even ones: the later drain of a round meets what the
      // earlier left behind (a larger outbox, the WAL to checkpoint).
      const one = async () => ones.push(await backlogDrain(1, env, 'max write rate of one web process'));
      const two = async () => twos.push(await backlogDrain(2, env, 'max write rate'));
      for (const drainWith of round % 2 === 1 ? [one, two] : [two, one]) await drainWith();
    }
    const perRound = (f: (round: number) => number) => ones.map((_, round) => f(round));
    const line = (values: number[], digits: number, unit = '') =>
      `median ${median(values).toFixed(digits)}${unit} (${values.map(v => v.toFixed(digits)).join(', ')})`;
    const maxRate = median([...ones, ...twos].map(d => d.rate));
    console.log(
      `\ndrains, ${rounds} alternating rounds; max write rate ${line(
        [...ones, ...twos].map(d => d.rate),
        0,
        ' changes/s',
      )}`,
    );
    for (const consumer of OUTBOX_CONSUMERS) {
      const c = consumer.name;
      console.log(
        `  ${c.padEnd(17)} 1 worker, x its round's max write rate: ${line(
          perRound(r => ones[r].run.rates[c] / ones[r].rate),
          1,
          'x',
        )}`,
      );
      console.log(
        `  ${''.padEnd(17)} 2 workers / 1 worker: ${line(
          perRound(r => twos[r].run.rates[c] / ones[r].run.rates[c]),
          2,
        )}`,
      );
    }
    console.log(
      `  all consumers, events/s until every marker is set, 2 workers / 1 worker: ${line(
        perRound(r => twos[r].run.total / ones[r].run.total),
        2,
      )}`,
    );

    if (process.env.BENCH_SCALING !== '0') await scalingRun(pool, write, env, children);

    if (process.env.BENCH_DRAIN_ONLY === '1') {
      await web.stop();
      return;
    }
    // 4: lag at half the max write rate, one worker running; 5: again, paced, at half the rate the API reached
    // with the worker running (the whole system's max: at the first rate the 2 cores are saturated).
    const withWorker = await lagRun(pool, write, Math.round(maxRate / 2), env, children);
    console.log(
      `\nagain at half the API's max write rate with the worker running (${withWorker.toFixed(0)} writes/s):`,
    );
    await lagRun(pool, write, Math.round(withWorker / 2), env, children, LAG_ROUNDS);
    await web.stop();
  } finally {
    await interruptible.finish();
    await pool.end();
  }
}

/**
 * About how many events a drain's backlog holds at the least (BENCH_DRAIN_MIN_EVENTS, 100,000, as the scaling
 * phase's), whatever the machine's write rate: a backlog drained in a second or two measures the processes'
 * start-up more than their drain, and the two-process ratio with it (docs/performance.md).
 */
const DRAIN_MIN_EVENTS = Number(process.env.BENCH_DRAIN_MIN_EVENTS ?? 100_000);

/** Seconds of the warm-up backlog per worker process that a drain's processes drain before the measured one (BENCH_WARM_UP_SECONDS). */
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 3);

/**
 * Seconds each lag phase's new worker process runs at the phase's rate before the measured windows
 * (BENCH_LAG_WARM_UP_SECONDS). A worker's first seconds under load are not its steady state: it compacts its
 * old generation every few seconds, each time with a pause and incremental marking before it, until the heap has
 * grown to its working size, and then seldom and briefly. With the short warm-up the first window's p99 was well
 * above the later windows' (docs/performance.md, "The lag tail").
 */
const LAG_WARM_UP_SECONDS = Number(process.env.BENCH_LAG_WARM_UP_SECONDS ?? 20);

/** Worker processes per drain of BENCH_DRAIN_AB (BENCH_AB_PROCESSES, 1). */
const AB_PROCESSES = Number(process.env.BENCH_AB_PROCESSES ?? 1);

/** Paced lag windows per arm and round of BENCH_LAG_AB (BENCH_AB_WINDOWS, 1); each arm starts a new worker process. */
const AB_WINDOWS = Number(process.env.BENCH_AB_WINDOWS ?? 1);

/** Paced lag windows per lag phase (BENCH_LAG_ROUNDS). */
const LAG_ROUNDS = Number(process.env.BENCH_LAG_ROUNDS ?? 3);

/** One consumer's commit -> marker lag over a measured window, in ms. */
interface ConsumerLag {
  consumer: string;
  n: string;
  p50: number;
  p99: number;
  max: number;
}

/**
 * Commit -> marker lag per consumer while `rate` writes/s flow and one (warmed-up) worker process runs: paced
 * evenly (the measure) in BENCH_LAG_ROUNDS windows (3) with the same worker, each printed and then the medians
 * of their p50/p99/max per consumer (one 10 s window's p99 is its ~70th slowest event, so one stall decides
 * it), then one window in autocannon's per-second bursts (every second starts with its whole quota at full
 * speed). Then the API's max write rate with that worker stopped and running; returns the latter.
 * `pacedRounds` > 0: only that many paced windows; returns `rate`.
 */
async function lagRun(
  pool: pg.Pool,
  write: Write,
  rate: number,
  env: Record<string, string>,
  children: BenchProcess[],
  pacedRounds = 0,
): Promise<number> {
  const lagSeconds = Number(process.env.BENCH_LAG_SECONDS ?? 10);
  await vacuum(pool);
  const worker = await startProcess('worker', env, children);
  // Warm-up at the same rate (JIT, connections, prepared statements, the heap at its working size), then the
  // measured runs.
  await write(rate, LAG_WARM_UP_SECONDS, true);
  await waitDrained(pool);
  const paced = pacedRounds > 0 ? pacedRounds : LAG_ROUNDS;
  const windows = [...Array.from({ length: paced }, () => true), ...(pacedRounds > 0 ? [] : [false])];
  const pacedLags: ConsumerLag[][] = [];
  const from = await lagStart(pool);
  for (const evenly of windows) {
    const mark = await maxEventId(pool);
    const statements = await statementStats(pool);
    const cpuBefore = await pipelineCpu(pool, worker);
    const machineBefore = machineCpu();
    const began = new Date();
    const achieved = await write(rate, lagSeconds, evenly);
    const machineBusy = busyShare(machineBefore, machineCpu());
    await waitDrained(pool);
    const cpuAfter = await pipelineCpu(pool, worker);
    const lags = await pool.query<ConsumerLag>(
      `select c.consumer, count(*) as n,
              percentile_cont(0.5) within group (order by c.ms) as p50,
              percentile_cont(0.99) within group (order by c.ms) as p99, max(c.ms) as max
         from (select c.consumer, extract(epoch from x.done_at - ${from.start}) * 1000 as ms
                 from outbox_event o join outbox_pending x on x.id = o.id
                 join ${CONSUMER_NAMES} on c.code = x.consumer
                where o.id > $1
                union all
               select 'web: start -> commit', extract(epoch from ${from.start} - o.created_at) * 1000
                 from outbox_event o
                where o.id > $1 and ${from.commits}) c
        group by c.consumer order by c.consumer`,
      [mark],
    );
    const web = lags.rows.filter(l => l.consumer.startsWith('web'));
    const consumers = lags.rows.filter(l => !web.includes(l));
    if (evenly) pacedLags.push(consumers);
    console.log(
      `\nlag ${from.label} -> marker at ${achieved.rate.toFixed(0)} writes/s (asked ${rate}, ` +
        `${evenly ? 'paced evenly' : "autocannon's per-second bursts"}), one worker process (warmed up ${LAG_WARM_UP_SECONDS} s), ` +
        `writes from ${began.toISOString().slice(11, 19)} UTC (to compare with PostgreSQL's log, e.g. its checkpoints):`,
    );
    for (const l of [...consumers, ...web])
      console.log(`  ${l.consumer.padEnd(20)} ${lagFigures([l])}   (${l.n} events)`);
    const events = lags.rows.length > 0 ? Number(lags.rows[0].n) : 0;
    const perEvent = (ms: number) => ((ms * 1000) / Math.max(events, 1)).toFixed(0);
    console.log(
      `  CPU per event (all three consumers): worker ${perEvent(cpuAfter.process - cpuBefore.process)} µs + its ` +
        `PostgreSQL backends ${perEvent(backendCpuSince(cpuBefore.backends, cpuAfter.backends))} µs; ` +
        `worker RSS ${(worker.rss() / 1024 / 1024).toFixed(0)} MB; the machine's cores ${machineBusy.toFixed(0)}% busy ` +
        `while the writes ran (every process: web, worker, PostgreSQL, the load generator)`,
    );
    if (evenly) await printDoorbellJobs(env, began);
    await statements?.print(events);
  }

  if (paced > 1) {
    console.log(`\nlag at ${rate} writes/s, paced, medians of ${paced} windows of ${lagSeconds} s:`);
    for (const { consumer } of pacedLags[0])
      console.log(
        `  ${consumer.padEnd(20)} ${lagFigures(pacedLags.map(w => w.find(l => l.consumer === consumer)!))}`,
      );
  }
  if (pacedRounds > 0) {
    await worker.stop();
    return rate;
  }
  // The API's own max write rate while the worker drains behind it, against the same with the worker stopped.
  const fullSeconds = Number(process.env.BENCH_FULL_SECONDS ?? 8);
  worker.signalNode('SIGSTOP');
  const stopped = await write(undefined, fullSeconds);
  worker.signalNode('SIGCONT');
  await waitDrained(pool);
  const before = await pipelineCpu(pool, worker);
  const fullMark = await maxEventId(pool);
  const running = await write(undefined, fullSeconds);
  await waitDrained(pool);
  const after = await pipelineCpu(pool, worker);
  const fullEvents = Number(
    (await pool.query<{ n: string }>('select count(*) as n from outbox_event where id > $1', [fullMark]))
      .rows[0].n,
  );
  const fullPerEvent = (ms: number) => ((ms * 1000) / Math.max(fullEvents, 1)).toFixed(0);
  console.log(
    `API max write rate: ${stopped.rate.toFixed(0)} changes/s with the worker stopped, ${running.rate.toFixed(0)} ` +
      `with it running (${(running.rate / stopped.rate).toFixed(2)}); worker CPU per event at full speed ` +
      `${fullPerEvent(after.process - before.process)} µs + backends ${fullPerEvent(backendCpuSince(before.backends, after.backends))} µs`,
  );
  await worker.stop();
  return running.rate;
}

/** Worker processes per arm of the scaling phase (BENCH_SCALING_PROCESSES), against the first. */
const SCALING_PROCESSES = (process.env.BENCH_SCALING_PROCESSES ?? '1,2,3').split(',').map(Number);

/** The share of one core each worker process of the scaling phase may use (BENCH_SCALING_CORES). */
const SCALING_CORES = Number(process.env.BENCH_SCALING_CORES ?? 0.1);

/**
 * The weight of each capped worker process against every other task of the machine, in multiples of a task's
 * (BENCH_SCALING_WEIGHT, 10): on a shared machine whose load average is far above its cores, a cgroup of one
 * task's weight gets less than its cap; with more weight it gets its cap, and no more.
 */
const SCALING_WEIGHT = Number(process.env.BENCH_SCALING_WEIGHT ?? 10);

/**
 * The weight of everything else of the bench during the scaling phase (BENCH_SCALING_FEEDER_WEIGHT, 64; 0 leaves
 * it where it is): the bench and its web process, and every PostgreSQL backend of the bench's database, each in
 * a cgroup of that weight without a cap. Then the database, as on a server of its own, serves what the capped
 * processes ask of it, and the backlog is written at the API's rate, not the neighbours' (docs/performance.md).
 */
const SCALING_FEEDER_WEIGHT = Number(process.env.BENCH_SCALING_FEEDER_WEIGHT ?? 64);

/**
 * Moves the bench (with the processes it starts from now on) and `children` into a weighted cgroup, and every
 * backend of the bench's database into another, once a second (connections come and go), until the returned
 * function is called; that moves them back.
 */
async function weightFeeders(pool: pg.Pool, children: BenchProcess[]): Promise<() => Promise<void>> {
  if (SCALING_FEEDER_WEIGHT <= 0) return async () => undefined;
  const feeder = cpuCap(`stockroom-bench-${process.pid}-feeder`, undefined, SCALING_FEEDER_WEIGHT) as CpuCap;
  const backends = cpuCap(
    `stockroom-bench-${process.pid}-backends`,
    undefined,
    SCALING_FEEDER_WEIGHT,
  ) as CpuCap;
  for (const member of [process.pid, ...children.map(child => child.pid)]) feeder.add(member);
  const moved = new Set<number>();
  const move = async () => {
    const { rows } = await pool.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database()',
    );
    for (const { pid } of rows.filter(row => !moved.has(row.pid))) {
      backends.add(pid);
      moved.add(pid);
    }
  };
  await move();
  const moving = setInterval(() => void move().catch(() => undefined), 1000);
  return async () => {
    clearInterval(moving);
    await backends.remove();
    await feeder.remove();
  };
}

/**
 * Whether more worker processes add capacity where there are cores for them. On this machine's two cores one
 * uncapped process already fills them with its consumers' backends, so each worker process gets a cgroup of its
 * own capped at SCALING_CORES of one core: then the workers, not PostgreSQL or the cores, limit the drain, as on
 * a machine with a core per process. For each count of SCALING_PROCESSES (in BENCH_SCALING_ROUNDS alternating
 * rounds, 3, whose medians are the figures: one round's ratio swings by a fifth): the processes are started,
 * capped, warmed up on a backlog of BENCH_SCALING_WARM_UP_SECONDS (8) of writes per process (the processes share
 * it: each gets the warm-up one process gets, its JIT and heap as far along) and stopped; then a backlog of at
 * least 30 full batches per process and consumer at the largest count (and at least BENCH_SCALING_EVENTS,
 * 100,000) is written and drained. A consumer's rate is taken over the 10-90 % of its markers: the processes'
 * start on the backlog and its last partitions' tail are not what scales.
 */
async function scalingRun(
  pool: pg.Pool,
  write: Write,
  env: Record<string, string>,
  children: BenchProcess[],
): Promise<void> {
  const probe = cpuCap(`stockroom-bench-probe-${process.pid}`, SCALING_CORES);
  if (typeof probe === 'string') {
    console.log(`
scaling phase skipped: ${probe}`);
    return;
  }
  await probe.remove();
  const unweight = await weightFeeders(pool, children);
  try {
    await scalingRounds(pool, write, children, env);
  } finally {
    await unweight();
  }
}

/** scalingRun's rounds, each count of processes in turn, and their table. */
async function scalingRounds(
  pool: pg.Pool,
  write: Write,
  children: BenchProcess[],
  env: Record<string, string>,
): Promise<void> {
  const events = Math.max(
    Number(process.env.BENCH_SCALING_EVENTS ?? 100_000),
    30 * CONSUMER_BATCH * Math.max(...SCALING_PROCESSES),
  );
  const warmUpSeconds = Number(process.env.BENCH_SCALING_WARM_UP_SECONDS ?? 8);
  const rounds = Number(process.env.BENCH_SCALING_ROUNDS ?? 3);
  console.log(
    `
=== scaling: worker processes each in a cgroup of its own capped at ${SCALING_CORES} core; backlogs of ` +
      `>= ${events} events; load average ${loadAverage()}`,
  );
  const runs = new Map<number, ScalingDrain[]>(SCALING_PROCESSES.map(n => [n, []]));
  for (let round = 1; round <= rounds; round++)
    for (const count of SCALING_PROCESSES) {
      const workers = await startStopped(count, env, children);
      const caps = workers.map((worker, i) => {
        const cap = cpuCap(`stockroom-bench-${process.pid}-${i}`, SCALING_CORES, SCALING_WEIGHT) as CpuCap;
        cap.add(worker.pid);
        return cap;
      });
      try {
        // Warm-up in the cgroups: every process joins the drain (the doorbell recruits one per full batch), on
        // a backlog as many times larger as there are processes.
        const warmCpu = workers.map(worker => worker.cpuMs());
        await write(undefined, warmUpSeconds * count);
        await drain(pool, await maxEventId(pool), workers, 'warm-up');
        for (const worker of workers) worker.signalNode('SIGSTOP');
        const warmUp = workers.map((worker, i) => worker.cpuMs() - warmCpu[i]);
        await vacuum(pool);
        const mark = await maxEventId(pool);
        await writeBacklog(pool, write, mark, events);
        const run = await cappedDrain(pool, mark, workers, caps);
        runs.get(count)!.push(run);
        const ones = runs.get(SCALING_PROCESSES[0])![round - 1];
        console.log(
          `
round ${round}, ${count} worker process${count === 1 ? '' : 'es'} at ${SCALING_CORES} core each ` +
            `(warm-up CPU per process ${warmUp.join(' / ')} ms; during the drain ${run.cpuMs.join(' / ')} ms; ` +
            `the machine's cores ${run.machineBusy.toFixed(0)}% busy; load average ${loadAverage()}):`,
        );
        const perEvent = (ms: number) => ((ms * 1000) / Math.max(run.total, 1)).toFixed(1);
        console.log(
          `  CPU per marker (one event of one consumer): workers ${perEvent(run.threads.main + run.threads.others)} µs ` +
            `(main threads ${perEvent(run.threads.main)}, V8's and libuv's threads ${perEvent(run.threads.others)}), ` +
            `their PostgreSQL backends ${perEvent(run.backendsMs)} µs; periods that used up the cap: ` +
            `${run.throttling.map(t => `${((100 * t.throttled) / Math.max(t.periods, 1)).toFixed(0)}%`).join(' / ')} ` +
            `(held back ${run.throttling.map(t => t.throttledMs.toFixed(0)).join(' / ')} ms of ${run.seconds.toFixed(1)} s)`,
        );
        for (const consumer of OUTBOX_CONSUMERS)
          console.log(
            `  ${consumer.name.padEnd(17)} ${run.rates[consumer.name].toFixed(0).padStart(6)} events/s over the ` +
              `10-90 % of ${run.events[consumer.name]} markers (${(run.rates[consumer.name] / ones.rates[consumer.name]).toFixed(2)}x one process)`,
          );
      } finally {
        await Promise.all(workers.map(worker => worker.stop()));
        for (const cap of caps) await cap.remove();
      }
    }
  const slowest = (run: ScalingDrain) => Math.min(...Object.values(run.rates));
  const ones = runs.get(SCALING_PROCESSES[0])!;
  console.log(
    `
scaling at ${SCALING_CORES} core per worker process, ${rounds} round(s); slowest consumer's rate over the ` +
      `10-90 % of its markers, against ${SCALING_PROCESSES[0]} process (goal: >= 1.9x with 2, >= 2.8x with 3):`,
  );
  console.log(
    `  processes   ${OUTBOX_CONSUMERS.map(c => c.name.padStart(17)).join('')}   slowest   x ${SCALING_PROCESSES[0]}`,
  );
  for (const [count, list] of runs) {
    const ratios = list.map((run, r) => slowest(run) / slowest(ones[r]));
    console.log(
      `  ${String(count).padEnd(11)} ${OUTBOX_CONSUMERS.map(c =>
        median(list.map(run => run.rates[c.name]))
          .toFixed(0)
          .padStart(17),
      ).join('')}` +
        `   ${median(list.map(slowest)).toFixed(0).padStart(7)}   ${median(ratios).toFixed(2)}` +
        (list.length > 1 ? ` (${ratios.map(v => v.toFixed(2)).join(', ')})` : ''),
    );
  }
}

/** The machine's load average over 1, 5 and 15 minutes (the machine is shared: the scaling figures state it). */
const loadAverage = (): string =>
  loadavg()
    .map(v => v.toFixed(2))
    .join(' ');

/** Writes at full speed until at least `events` events were written after `mark` (chunks of at most 20 s). */
async function writeBacklog(pool: pg.Pool, write: Write, mark: string, events: number): Promise<void> {
  let rate = 2000;
  for (;;) {
    const { rows } = await pool.query<{ n: string }>('select count(*) as n from outbox_event where id > $1', [
      mark,
    ]);
    const left = events - Number(rows[0].n);
    if (left <= 0) return;
    rate = Math.max((await write(undefined, Math.min(20, Math.max(2, Math.ceil(left / rate))))).rate, 100);
  }
}

interface ScalingDrain {
  /** Per consumer: events over the time between its 10 % and its 90 % marker. */
  rates: Record<string, number>;
  events: Record<string, number>;
  /** CPU of each worker process during the drain. */
  cpuMs: number[];
  /** Of all worker processes together: on their main threads and on their other threads, in ms. */
  threads: { main: number; others: number };
  /** CPU of the PostgreSQL backends serving the worker processes, in ms. */
  backendsMs: number;
  /** Each cap's throttling during the drain. */
  throttling: Throttling[];
  /** Every consumer's events together, and the drain's length until every marker was set. */
  total: number;
  seconds: number;
  machineBusy: number;
}

/** Lets the stopped (capped) worker processes drain the backlog above `mark`; each consumer's 10-90 % rate. */
async function cappedDrain(
  pool: pg.Pool,
  mark: string,
  workers: BenchProcess[],
  caps: CpuCap[],
): Promise<ScalingDrain> {
  const cpuBefore = workers.map(worker => worker.cpuMs());
  const threadsBefore = workers.map(worker => treeThreadCpuMs(worker.pid));
  const throttlingBefore = caps.map(cap => cap.throttling());
  const machineBefore = machineCpu();
  const started = performance.now();
  for (const worker of workers) worker.signalNode('SIGCONT');
  // Backends opened during the drain count from 0 (backendCpuSince), closed ones at their last reading: a
  // reading every second finds them.
  const backends = new Map<number, number>();
  const backendsBefore = new Map<number, number>();
  const readBackends = async () => {
    for (const worker of workers)
      for (const [pid, ms] of await backendCpuMs(pool, worker.pid)) backends.set(pid, ms);
  };
  for (const worker of workers)
    for (const [pid, ms] of await backendCpuMs(pool, worker.pid)) {
      backendsBefore.set(pid, ms);
      backends.set(pid, ms);
    }
  const reading = setInterval(() => void readBackends().catch(() => undefined), 1000);
  try {
    await waitDrained(pool, 900_000);
    await readBackends();
  } finally {
    clearInterval(reading);
  }
  const seconds = (performance.now() - started) / 1000;
  const machineBusy = busyShare(machineBefore, machineCpu());
  const cpuMs = workers.map((worker, i) => worker.cpuMs() - cpuBefore[i]);
  const threads = workers.reduce(
    (sum, worker, i) => {
      const now = treeThreadCpuMs(worker.pid);
      return {
        main: sum.main + now.main - threadsBefore[i].main,
        others: sum.others + now.others - threadsBefore[i].others,
      };
    },
    { main: 0, others: 0 },
  );
  const throttling = caps.map((cap, i) => {
    const now = cap.throttling();
    return {
      periods: now.periods - throttlingBefore[i].periods,
      throttled: now.throttled - throttlingBefore[i].throttled,
      throttledMs: now.throttledMs - throttlingBefore[i].throttledMs,
    };
  });
  const backendsMs = backendCpuSince(backendsBefore, backends);
  const { rows } = await pool.query<{ consumer: string; n: string; p10: number; p90: number }>(
    `select c.consumer, count(*) as n,
            percentile_cont(0.1) within group (order by extract(epoch from x.done_at)) as p10,
            percentile_cont(0.9) within group (order by extract(epoch from x.done_at)) as p90
       from outbox_pending x join ${CONSUMER_NAMES} on c.code = x.consumer
      where x.id > $1
      group by c.consumer`,
    [mark],
  );
  const rates: Record<string, number> = {};
  const events: Record<string, number> = {};
  for (const r of rows) {
    events[r.consumer] = Number(r.n);
    rates[r.consumer] = (0.8 * Number(r.n)) / (Number(r.p90) - Number(r.p10));
  }
  const total = Object.values(events).reduce((sum, n) => sum + n, 0);
  return { rates, events, cpuMs, threads, backendsMs, throttling, total, seconds, machineBusy };
}

/** CPU used so far by a worker process tree and by the PostgreSQL backends serving it. */
async function pipelineCpu(
  pool: pg.Pool,
  worker: BenchProcess,
): Promise<{ process: number; backends: Map<number, number> }> {
  return { process: worker.cpuMs(), backends: await backendCpuMs(pool, worker.pid) };
}

/**
 * How the doorbell jobs of each consumer added since `since` (the window's start) spent their time: waiting in
 * the queue, then running. Jobs of earlier phases are left out: rung while that phase's worker was stopped,
 * they waited minutes for it, and their waits said nothing of the window's.
 */
async function printDoorbellJobs(env: Record<string, string>, since: Date): Promise<void> {
  const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    maxRetriesPerRequest: null,
  });
  try {
    for (const consumer of OUTBOX_CONSUMERS) {
      const queue = new Queue(consumer.queue, { connection, prefix: env.REDIS_PREFIX });
      const jobs = (await queue.getJobs(['completed'], 0, 99)).filter(
        j => j.processedOn && j.finishedOn && j.timestamp >= since.getTime(),
      );
      const waits = jobs.map(j => j.processedOn! - j.timestamp);
      const runs = jobs.map(j => j.finishedOn! - j.processedOn!);
      const applied = jobs.map(j => Number((j.returnvalue as { applied?: number } | null)?.applied ?? 0));
      // No job ended in a window whose every look found events (RUN_LINGER_MS): one run lasted through it.
      console.log(
        `  ${consumer.name.padEnd(17)} ` +
          (jobs.length === 0
            ? 'no doorbell job ended in the window: one run lasted through it'
            : `${jobs.length} doorbell jobs of the window (of the last 100): wait p50 ${median(waits)} ms, ` +
              `run p50 ${median(runs)} ms, events per run p50 ${median(applied)}`),
      );
      await queue.close();
    }
  } finally {
    await connection.quit();
  }
}

interface DrainRun {
  events: number;
  /** Every consumer's events together per second, from the first marker to the last of all. */
  total: number;
  /** CPU of the worker processes and of the PostgreSQL backends serving them while they drained. */
  cpuMs: { workers: number; backends: number };
  rates: Record<string, number>;
  seconds: Record<string, number>;
  peakRssMb: number;
  /** Share of the machine's cores that were busy while the workers drained, in %. */
  machineBusy: number;
  lockWaitShare: number;
  /** The statements seen waiting on a lock or a shared-memory lock most often (samples), with what they waited for. */
  lockWaits: [string, number][];
}

function report(label: string, run: DrainRun, writeRate: number): void {
  const perEvent = (ms: number) => ((ms * 1000) / Math.max(run.events, 1)).toFixed(0);
  console.log(
    `\ndrain of ${run.events} events with ${label} (peak worker RSS ${run.peakRssMb.toFixed(0)} MB; ` +
      `${(run.lockWaitShare * 100).toFixed(1)}% of sampled consumer time waiting on locks; CPU per event, all ` +
      `three consumers: workers ${perEvent(run.cpuMs.workers)} µs + their PostgreSQL backends ${perEvent(run.cpuMs.backends)} µs; ` +
      `the machine's cores ${run.machineBusy.toFixed(0)}% busy):`,
  );
  for (const consumer of OUTBOX_CONSUMERS)
    console.log(
      `  ${consumer.name.padEnd(17)} ${run.rates[consumer.name].toFixed(0).padStart(7)} events/s ` +
        `(${run.seconds[consumer.name].toFixed(2)} s)   ${(run.rates[consumer.name] / writeRate).toFixed(1)}x the max write rate`,
    );
  for (const [statement, samples] of run.lockWaits)
    console.log(`  waiting (${samples} samples): ${statement}`);
}

/**
 * Starts `count` worker processes and stops them (SIGSTOP) once they are ready, so a drain measures draining,
 * not how long node takes to start a second process on the same cores.
 */
async function startStopped(
  count: number,
  env: Record<string, string>,
  children: BenchProcess[],
): Promise<BenchProcess[]> {
  const started = await Promise.all(
    Array.from({ length: count }, () => startProcess('worker', env, children)),
  );
  for (const worker of started) worker.signalNode('SIGSTOP');
  return started;
}

/**
 * Lets the stopped worker processes go (SIGCONT, all at once) on the backlog above `mark` and waits until every
 * marker is set. A consumer's rate is its events over the time from the first marker any consumer set (the
 * workers began) to its own last marker, both read from the database clock.
 */
async function drain(
  pool: pg.Pool,
  mark: string,
  started: BenchProcess[],
  phase: 'measured' | 'warm-up' = 'measured',
): Promise<DrainRun> {
  // A warm-up drain leaves its processes running and prints nothing.
  const statements = phase === 'measured' ? await statementStats(pool) : undefined;
  const cpuBefore = await Promise.all(started.map(worker => pipelineCpu(pool, worker)));
  const machineBefore = machineCpu();
  for (const worker of started) worker.signalNode('SIGCONT');
  let peakRssMb = 0;
  let waiting = 0;
  let active = 0;
  const waitsBy = new Map<string, number>();
  const sampler = setInterval(() => {
    peakRssMb = Math.max(
      peakRssMb,
      started.reduce((sum, child) => sum + child.rss() / 1024 / 1024, 0),
    );
    void pool
      .query<{ lock: boolean; statement: string | null }>(
        // What a backend waits for (`Lock/extend`: another one extends the table; `LWLock/...`: a shared memory
        // lock such as a buffer's content) and on which statement.
        `select wait_event_type = 'Lock' as lock,
                case when wait_event_type in ('Lock', 'LWLock') then wait_event_type || '/' || wait_event || ': ' ||
                     left(regexp_replace(query, '\\s+', ' ', 'g'), 60) end as statement
           from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
      )
      .then(({ rows }) => {
        active += rows.length;
        waiting += rows.filter(row => row.lock).length;
        for (const { statement } of rows)
          if (statement !== null) waitsBy.set(statement, (waitsBy.get(statement) ?? 0) + 1);
      })
      .catch(() => undefined);
  }, 50);
  try {
    await waitDrained(pool);
  } finally {
    clearInterval(sampler);
  }
  const machineBusy = busyShare(machineBefore, machineCpu());
  const cpuAfter = await Promise.all(started.map(worker => pipelineCpu(pool, worker)));
  if (phase === 'measured') await Promise.all(started.map(child => child.stop()));
  const sum = (f: (i: number) => number) => started.reduce((total, _, i) => total + f(i), 0);
  const { rows } = await pool.query<{ consumer: string; n: string; first: number; last: number }>(
    `with t as (select c.consumer, extract(epoch from x.done_at) as at
                  from outbox_pending x join ${CONSUMER_NAMES} on c.code = x.consumer
                 where x.id > $1)
     select consumer, count(*) as n, (select min(at) from t) as first, max(at) as last from t group by consumer`,
    [mark],
  );
  await statements?.print(Number(rows[0]?.n ?? 0));
  const rates: Record<string, number> = {};
  const seconds: Record<string, number> = {};
  for (const r of rows) {
    seconds[r.consumer] = Number(r.last) - Number(r.first);
    rates[r.consumer] = Number(r.n) / seconds[r.consumer];
  }
  return {
    events: Number(rows[0]?.n ?? 0),
    cpuMs: {
      workers: sum(i => cpuAfter[i].process - cpuBefore[i].process),
      backends: sum(i => backendCpuSince(cpuBefore[i].backends, cpuAfter[i].backends)),
    },
    total: rows.reduce((events, r) => events + Number(r.n), 0) / Math.max(...Object.values(seconds)),
    rates,
    seconds,
    peakRssMb,
    machineBusy,
    lockWaitShare: active === 0 ? 0 : waiting / active,
    lockWaits: [...waitsBy].sort((a, b) => b[1] - a[1]).slice(0, 6),
  };
}

/**
 * When the bench's PostgreSQL loads pg_stat_statements (BENCH_DATABASE_URL pointing at a server of your own with
 * `shared_preload_libraries = 'pg_stat_statements'`): resets its counters, and `print` lists the statements that
 * took most of the server's time since, per event drained (calls, execution and planning time), so that one and
 * two worker processes can be compared statement by statement. Undefined when the library is not loaded.
 */
async function statementStats(pool: pg.Pool): Promise<{ print(events: number): Promise<void> } | undefined> {
  const { rows } = await pool.query<{ loaded: boolean }>(
    "select current_setting('shared_preload_libraries') like '%pg_stat_statements%' as loaded",
  );
  if (!rows[0].loaded) return undefined;
  await pool.query('create extension if not exists pg_stat_statements');
  await pool.query('select pg_stat_statements_reset()');
  return {
    print: async events => {
      const top = await pool.query<{ calls: string; exec: number; plan: number; q: string }>(
        `select calls, total_exec_time as exec, total_plan_time as plan,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 70) as q
           from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
          order by total_exec_time + total_plan_time desc limit 8`,
      );
      const per = (value: number) => ((value * 1000) / Math.max(events, 1)).toFixed(1);
      console.log(`  PostgreSQL statements per event (pg_stat_statements; ${events} events):`);
      for (const r of top.rows)
        console.log(
          `    ${(Number(r.calls) / Math.max(events, 1)).toFixed(3)} calls, exec ${per(r.exec)} µs, plan ${per(r.plan)} µs: ${r.q}`,
        );
    },
  };
}

/**
 * VACUUM ANALYZE before each phase, as a production server's autovacuum would do between them: this machine's
 * PostgreSQL runs with autovacuum off, and a phase on the dead progress rows of the backlogs before it measures
 * that (the takes' probes of the pending index walk their dead entries: at ~400 writes/s after six backlogs the
 * consumers' PostgreSQL time per event was ~2,900 µs).
 */
const vacuum = async (pool: pg.Pool): Promise<void> => void (await pool.query('vacuum analyze'));

/** p50 / p99 / max of one window, or the medians of several windows' (each listed in brackets). */
const lagFigures = (windows: ConsumerLag[]): string =>
  (['p50', 'p99', 'max'] as const)
    .map(key => {
      const values = windows.map(w => Number(w[key]));
      const each = values.length > 1 ? ` (${values.map(v => v.toFixed(1)).join(', ')})` : '';
      return `${key} ${median(values).toFixed(1).padStart(6)} ms${each}`;
    })
    .join('   ');

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function waitDrained(pool: pg.Pool, timeoutMs = 300000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ pending: boolean }>(
      'select exists (select 1 from outbox_pending where done_at is null) as pending',
    );
    if (!rows[0].pending) return;
    if (Date.now() > deadline) throw new Error('the consumers did not drain in time');
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

/** The consumers' names by their code in `outbox_pending`, as a relation `c(code, consumer)`. */
const CONSUMER_NAMES = `(values ${OUTBOX_CONSUMERS.map(c => `(${c.code}, '${c.name}')`).join(', ')}) as c(code, consumer)`;

/**
 * Where the lag starts. The issue's lag is commit -> marker: with `track_commit_timestamp = on` an event's lag
 * starts at its transaction's commit (pg_xact_commit_timestamp of the row's xmin), and the web's own start ->
 * commit time (mostly its WAL flush: p99 1-3 ms, max 6-25 ms in this round's runs) is printed apart. Without it,
 * at the statement's start (`created_at`), which counts a commit the web waited on as lag of every consumer.
 */
async function lagStart(pool: pg.Pool): Promise<{ start: string; commits: string; label: string }> {
  const { rows } = await pool.query<{ on: boolean }>(
    "select current_setting('track_commit_timestamp')::boolean as on",
  );
  return rows[0].on
    ? { start: 'pg_xact_commit_timestamp(o.xmin)', commits: 'true', label: 'commit' }
    : { start: 'o.created_at', commits: 'false', label: 'statement start (track_commit_timestamp off)' };
}

const maxEventId = async (pool: pg.Pool): Promise<string> =>
  (await pool.query<{ id: string }>('select coalesce(max(id), 0)::text as id from outbox_event')).rows[0].id;

async function seed(pool: pg.Pool, jwtSecret: string): Promise<{ auth: string; itemIds: string[] }> {
  const username = 'bench-admin';
  await pool.query(
    `insert into app_user (username, email, full_name, role) values ($1, $2, 'Bench admin', 'ROLE_ADMIN')`,
    [username, `${username}@bench.test`],
  );
  const token = await issueToken({ sub: username, role: 'ROLE_ADMIN' }, jwtSecret, 3600);
  await pool.query(
    `insert into supplier (name, created_by) select 'Bench supplier ' || g, $1 from generate_series(1, $2) g`,
    [username, SUPPLIERS],
  );
  // One item in ten sits at its minimum, so the random walk crosses it both ways (alerts open and close).
  const { rows } = await pool.query<{ id: string }>(
    `insert into inventory_item (name, quantity, price, minimum_quantity, supplier_id, created_by)
     select 'Bench item ' || g, 500, 9.99, case when g % 10 = 0 then 500 else 0 end,
            (select id from supplier order by name offset (g % $2) limit 1), $1
       from generate_series(1, $3) g
     returning id`,
    [username, SUPPLIERS, ITEMS],
  );
  return { auth: `Bearer ${token}`, itemIds: rows.map(r => r.id) };
}

/**
 * A Procfile line (`web` or `worker`) started exactly as written (compiled output: `npm run build` first), ready
 * when it serves or says so. BENCH_CPU_PROF=<dir> profiles the worker processes (node --cpu-prof).
 */
async function startProcess(
  role: 'web' | 'worker',
  env: Record<string, string>,
  children: BenchProcess[],
): Promise<BenchProcess> {
  const log = path.join(tmpdir(), `stockroom-bench-pipeline-${role}-${children.length}.log`);
  // A fresh log: a line left by an earlier run must not count as this process being ready.
  writeFileSync(log, '');
  const profile =
    process.env.BENCH_CPU_PROF && role === 'worker'
      ? `--cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF} `
      : '';
  const processEnv = {
    ...process.env,
    ...env,
    LOG_LEVEL: 'info',
    NODE_OPTIONS:
      `${profile}${role === 'worker' ? (process.env.BENCH_WORKER_NODE_OPTIONS ?? '') : ''}`.trim(),
  };
  // BENCH_WORKER_DIR (e.g. through BENCH_LAG_AB) runs the worker line of another built checkout: an A/B of two
  // builds. BENCH_WORKER_NODE_FLAGS (the same) adds node flags to the worker line, also V8's that NODE_OPTIONS
  // refuses.
  const flags = role === 'worker' ? (env.BENCH_WORKER_NODE_FLAGS ?? '') : '';
  const command = procfileCommand(role).replace(' dist/scripts/', ` ${flags} dist/scripts/`);
  const proc =
    role === 'worker' && (env.BENCH_WORKER_DIR || flags)
      ? startShellProcess(role, `cd ${env.BENCH_WORKER_DIR ?? '.'} && ${command}`, processEnv, log)
      : startProcfileProcess(role, processEnv, log);
  children.push(proc);
  if (role === 'web') await waitUntilServing(proc, `http://127.0.0.1:${env.PORT}/api/health`);
  else await waitForLogLine(proc, log, '"workers started"');
  return proc;
}

if (import.meta.url === `file://${process.argv[1]}`) await runScript(benchEventPipeline);

export { benchEventPipeline };
