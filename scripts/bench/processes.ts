import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { constants as os, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdMachineForBench } from './machine-lock.js';

/**
 * Benchmark processes started the way production starts them: a Procfile line run by `sh -c` from the
 * repository root with `node_modules/.bin` first on PATH (Node 24), each in its own process group, and the RSS
 * of the whole process tree (sh, node and anything they start). Used by the inventory and pipeline benches.
 */
export const REPO_ROOT = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      readFileSync(path.join(dir, 'Procfile'));
      return dir;
    } catch {
      if (path.dirname(dir) === dir) throw new Error('Procfile not found above ' + from);
    }
  }
}

export type ProcfileRole = 'release' | 'web' | 'worker';

/** The command of one Procfile line. */
export function procfileCommand(role: ProcfileRole): string {
  const lines = readFileSync(path.join(REPO_ROOT, 'Procfile'), 'utf8').split('\n');
  const line = lines.find(l => l.startsWith(`${role}:`));
  if (!line) throw new Error(`Procfile has no ${role} line`);
  return line.slice(role.length + 1).trim();
}

export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resident set size of the process and all its descendants, in bytes. */
  rss(): number;
  /** CPU time (user + system) used so far by the process and all its descendants, in ms. */
  cpuMs(): number;
  /** Sends `signal` to every node process of the tree (not the `sh` running the Procfile line). */
  signalNode(signal: NodeJS.Signals): void;
  /** SIGTERM to the process group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The bench's processes run in process groups of their own, out of reach of the terminal's Ctrl-C: on SIGINT or
 * SIGTERM this stops every one of `processes` (read when the signal comes: processes started later are
 * included) and exits as interrupted, not with the error of a request to a server that went away. `finish`,
 * in the bench's `finally`, removes the handlers, stops what still runs (once: a second SIGTERM would end a
 * process in the middle of its graceful shutdown) and exits as interrupted if a signal came meanwhile.
 */
export function stopOnInterrupt(processes: BenchProcess[], graceMs?: number): { finish(): Promise<void> } {
  let stopped: Promise<unknown> | undefined;
  const stopAll = () => (stopped ??= Promise.all(processes.map(p => p.stop(graceMs))));
  let exitCode: number | undefined;
  const interrupted = (signal: NodeJS.Signals) => {
    exitCode = 128 + os.signals[signal];
    void stopAll().finally(() => process.exit(exitCode));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  return {
    async finish() {
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      await stopAll();
      if (exitCode !== undefined) process.exit(exitCode);
    },
  };
}

const withNodeOnPath = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...env,
  PATH: `${path.join(REPO_ROOT, 'node_modules', '.bin')}${path.delimiter}${env.PATH ?? process.env.PATH ?? ''}`,
});

/**
 * Starts `command` through `sh -c` in its own process group; stdout and stderr go to `logFile` (a file costs
 * the server far less than a pipe the bench would have to drain). The bench's first process takes the machine
 * (holdMachineForBench): a second bench refuses to start beside it.
 */
export function startShellProcess(
  name: string,
  command: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
): BenchProcess {
  holdMachineForBench();
  const fd = openSync(logFile, 'a');
  const child = spawn('sh', ['-c', command], {
    cwd: REPO_ROOT,
    env: withNodeOnPath(env),
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name} did not start`);
  return {
    name,
    pid,
    child,
    rss: () => treeRss(pid),
    cpuMs: () => treeCpuMs(pid),
    signalNode: signal => {
      for (const member of processTree(pid)) {
        try {
          if (readlinkSync(`/proc/${member}/exe`).endsWith('/node')) process.kill(member, signal);
        } catch {
          // exited meanwhile
        }
      }
    },
    stop: async (graceMs = 15000) => {
      signalGroup(pid, 'SIGTERM');
      // sh may exit before its node child: wait for the whole process group, not just the child.
      const deadline = Date.now() + graceMs;
      while (groupAlive(pid) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 50));
      signalGroup(pid, 'SIGKILL');
    },
  };
}

/** Starts one Procfile line (`web`, `worker`, `release`) exactly as written. */
export function startProcfileProcess(
  role: ProcfileRole,
  env: NodeJS.ProcessEnv,
  logFile: string,
): BenchProcess {
  return startShellProcess(role, procfileCommand(role), env, logFile);
}

/** Runs the Procfile's `release` line to completion. */
export async function runRelease(env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  const release = startProcfileProcess('release', env, logFile);
  const code = await new Promise<number | null>(resolve => release.child.once('exit', resolve));
  if (code !== 0) throw new Error(`release failed (exit ${code}); see ${logFile}`);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Whether any process of process group `pgid` is still running (zombies excluded). */
function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && Number(fields[2]) === pgid) return true;
    } catch {
      // exited meanwhile
    }
  }
  return false;
}

/** Every process of the tree rooted at `pid` (Linux /proc). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const tree: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    tree.push(current);
    pending.push(...(children.get(current) ?? []));
  }
  return tree;
}

/** Sum of VmRSS over `pid` and every descendant, in bytes. */
export function treeRss(pid: number): number {
  return rssOf(processTree(pid));
}

/**
 * Sum of VmRSS over `pids` (a tree walked once by {@link processTree}), in bytes: for sampling every few ms,
 * where walking /proc each time would cost the machine more than the process measured.
 */
export function rssOf(pids: number[]): number {
  let total = 0;
  for (const member of pids) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${member}/status`, 'utf8'));
      if (match) total += Number(match[1]) * 1024;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

const TICKS_PER_SECOND = 100;

/** Sum of user + system CPU time over `pid` and every descendant, in ms (clock-tick resolution). */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const member of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${member}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited meanwhile
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** Polls `url` until it answers 2xx, or fails when `process` exits or the deadline passes. */
export async function waitUntilServing(proc: BenchProcess, url: string, timeoutMs = 60000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited during start-up`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${proc.name} did not answer ${url} within ${timeoutMs} ms`);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

/** Waits until `logFile` contains `marker` (e.g. the worker's "workers started" line). */
export async function waitForLogLine(
  proc: BenchProcess,
  logFile: string,
  marker: string,
  timeoutMs = 60000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited during start-up; see ${logFile}`);
    if (readFileSync(logFile, 'utf8').includes(marker)) return;
    if (Date.now() > deadline) throw new Error(`${proc.name} did not log "${marker}" within ${timeoutMs} ms`);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

/** One load run: autocannon in its own process (scripts/bench/load.ts). */
export interface LoadSpec {
  url: string;
  paths?: string[];
  method?: 'GET' | 'PATCH';
  headers?: Record<string, string>;
  uniqueHeaders?: Record<string, string>;
  /** Requests per second over all connections (unset: as fast as the server answers). */
  rate?: number;
  /** Send at `rate` evenly (scripts/bench/paced-load.ts) instead of autocannon's per-second quota. */
  paced?: boolean;
  /** This run's generator, whatever `loadGenerator` says. */
  generator?: 'wrk' | 'autocannon';
  connections: number;
  seconds: number;
}

export interface LoadResult {
  rate: number;
  total: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time of the server's process tree per request (µs), when measured. */
  cpuUs?: number;
  /** CPU time of the PostgreSQL backends serving the server per request (µs), when measured. */
  pgCpuUs?: number;
  /** CPU time of the load generator per request (µs). */
  loadCpuUs?: number;
  /** CPU time of the worker process tree per request (µs), when it drains the round's events. */
  workerCpuUs?: number;
  /** CPU time of the worker's PostgreSQL backends per request (µs), likewise. */
  workerPgCpuUs?: number;
}

/**
 * The load generator of a run at full speed: wrk (native HTTP parser, one thread) where installed, else
 * autocannon (HTTP parsed in JavaScript, so it spends more of the shared cores on an answer with more
 * headers). BENCH_LOAD=autocannon|wrk chooses. A run at a set `rate` always uses autocannon or the paced loader.
 */
export const loadGenerator: 'wrk' | 'autocannon' =
  process.env.BENCH_LOAD === 'autocannon' || process.env.BENCH_LOAD === 'wrk'
    ? process.env.BENCH_LOAD
    : onPath('wrk')
      ? 'wrk'
      : 'autocannon';

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some(dir => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * One load run in its own process, never on a server's event loop: wrk (scripts/bench/wrk.lua) or autocannon
 * (scripts/bench/load.ts, compiled). The spec travels in a file, so a long list of paths fits.
 */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'stockroom-load-'));
  const file = path.join(dir, 'spec');
  const wrk = (spec.generator ?? loadGenerator) === 'wrk' && !spec.rate && !spec.paced;
  writeFileSync(file, wrk ? wrkSpec(spec) : JSON.stringify(spec));
  // `times` after wrk prints the CPU time of the shell's children: the generator's own CPU.
  const [command, args] = wrk
    ? [
        'sh',
        [
          '-c',
          'wrk -t1 -c"$1" -d"$2"s --latency -s "$3" "$4" -- "$5" && times',
          'wrk',
          String(spec.connections),
          String(spec.seconds),
          path.join(REPO_ROOT, 'scripts', 'bench', 'wrk.lua'),
          spec.url,
          file,
        ],
      ]
    : [
        path.join(REPO_ROOT, 'node_modules', '.bin', 'node'),
        [
          path.join(REPO_ROOT, 'dist', 'scripts', 'bench', spec.paced ? 'paced-load.js' : 'load.js'),
          `@${file}`,
        ],
      ];
  return new Promise<LoadResult>((resolve, reject) => {
    execFile(command, args, { cwd: REPO_ROOT, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`load generator failed: ${stderr || error.message}`));
      // A result that cannot be read rejects this run (thrown here, in a callback, it would end the bench).
      try {
        resolve(wrk ? wrkResult(stdout) : (JSON.parse(stdout.trim().split('\n').at(-1)!) as LoadResult));
      } catch (unreadable) {
        reject(unreadable instanceof Error ? unreadable : new Error(String(unreadable)));
      }
    });
  }).finally(() => rmSync(dir, { recursive: true, force: true }));
}

function wrkSpec(spec: LoadSpec): string {
  const paths = spec.paths ?? [new URL(spec.url).pathname];
  return [
    `method ${spec.method ?? 'GET'}`,
    ...Object.entries(spec.headers ?? {}).map(([name, value]) => `header ${name}: ${value}`),
    ...Object.entries(spec.uniqueHeaders ?? {}).map(
      ([name, prefix]) => `unique ${name}: ${prefix}-${process.pid}`,
    ),
    ...paths.map(p => `path ${p}`),
  ].join('\n');
}

/** wrk's JSON line (scripts/bench/wrk.lua) and the children's CPU line of `times` ("0m1.230s 0m0.450s"). */
function wrkResult(stdout: string): LoadResult {
  const lines = stdout.trim().split('\n');
  const json = lines.find(line => line.startsWith('{"total"'));
  if (!json) throw new Error(`wrk printed no result: ${stdout}`);
  const r = JSON.parse(json) as {
    total: number;
    durationUs: number;
    p50Us: number;
    p99Us: number;
    non2xx: number;
    errors: number;
  };
  const times = [...(lines.at(-1) ?? '').matchAll(/(\d+)m([\d.]+)s/g)];
  const seconds =
    times.length === 0 ? undefined : times.reduce((sum, [, m, s]) => sum + Number(m) * 60 + Number(s), 0);
  return {
    rate: r.total / (r.durationUs / 1e6),
    total: r.total,
    p50: r.p50Us / 1000,
    p99: r.p99Us / 1000,
    non2xx: r.non2xx,
    errors: r.errors,
    ...(seconds === undefined ? {} : { loadCpuUs: Math.round((seconds * 1e6) / Math.max(1, r.total)) }),
  };
}

/** A free TCP port on the loopback interface (for a server the bench starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The environment of the Procfile's processes in a bench: production, its database, port and secrets. */
export const procfileEnv = (databaseUrl: string, port: number, jwtSecret: string): NodeJS.ProcessEnv => ({
  ...process.env,
  NODE_ENV: 'production',
  DATABASE_URL: databaseUrl,
  REDIS_PREFIX: `bench-${randomUUID().slice(0, 8)}`,
  SESSION_SECRET: randomBytes(24).toString('hex'),
  JWT_SECRET: jwtSecret,
  PORT: String(port),
  PUBLIC_URL: `http://127.0.0.1:${port}`,
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
});

/**
 * CPU time (user + system, ms) of the tree rooted at `pid` spent on its processes' main threads and on every
 * other thread (V8's garbage collection and compiler threads, libuv's pool): how much of a node process's CPU
 * is its own JavaScript and how much the engine's background work.
 */
export function treeThreadCpuMs(pid: number): { main: number; others: number } {
  const split = { main: 0, others: 0 };
  for (const member of processTree(pid))
    try {
      for (const task of readdirSync(`/proc/${member}/task`)) {
        const stat = readFileSync(`/proc/${member}/task/${task}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        split[Number(task) === member ? 'main' : 'others'] +=
          ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
      }
    } catch {
      // exited meanwhile
    }
  return split;
}
