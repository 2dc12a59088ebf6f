import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processTree } from './processes.js';

/** A cgroup of its own whose processes together get at most a fraction of one core. */
export interface CpuCap {
  readonly path: string;
  /** Moves every process of the tree rooted at `pid` into the cgroup (threads started later stay in it). */
  add(pid: number): void;
  /** Moves whatever is left back to the parent and removes the cgroup (once an exited process is reaped). */
  remove(): Promise<void>;
  /**
   * The cap's periods so far, how many of them ran out of quota (the processes had work left when it was
   * used up) and for how long they were held back, in ms: whether the cap, or something else, limited them.
   */
  throttling(): Throttling;
}

export interface Throttling {
  periods: number;
  throttled: number;
  throttledMs: number;
}

/**
 * The cap's period (BENCH_SCALING_PERIOD_US, 10 ms): a capped process runs for its quota of each period, then
 * is held back until the next one. A slow core of its own never stops a process; the cap does, for the rest of
 * each period. The period must be short: with the kernel's default 100 ms a worker process at 0.1 core stood
 * still 90 ms at a time, often between the two statements of a batch with its partitions held, its peers found
 * them taken, and their CPU per event rose with every process added (docs/performance.md, Scaling out).
 */
const PERIOD_US = Number(process.env.BENCH_SCALING_PERIOD_US ?? 10_000);

/**
 * Where this process's cgroups live: the cgroup v1 `cpu` controller's directory of this process
 * (`cpu.cfs_quota_us`), or the cgroup v2 directory of this process when its controllers include `cpu`
 * (`cpu.max`). Undefined, with the reason, when neither can be written (not root, no controller, a container
 * without a writable cgroup file system).
 */
let base: ReturnType<typeof findCgroupBase> | undefined;

/**
 * Found once: the bench may move itself into a cgroup of its own (cpuCap's `add`), and every cgroup it makes
 * stays a sibling of that one, never its child.
 */
const cgroupBase = () => (base ??= findCgroupBase());

function findCgroupBase(): { version: 1 | 2; dir: string } | string {
  const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  const v1 = own.find(line => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(line));
  if (v1 && existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')) {
    const dir = path.join('/sys/fs/cgroup/cpu', v1.split(':')[2]);
    return writable(dir) ? { version: 1, dir } : `${dir} is not writable (the bench must run as root)`;
  }
  const v2 = own.find(line => line.startsWith('0::'));
  if (v2 && existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    const dir = path.join('/sys/fs/cgroup', v2.slice(3));
    if (!readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu'))
      return `the cpu controller is not available in ${dir}`;
    try {
      writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+cpu');
    } catch (error) {
      return `cannot enable the cpu controller below ${dir}: ${(error as Error).message}`;
    }
    return { version: 2, dir };
  }
  return 'no cgroup cpu controller (neither /sys/fs/cgroup/cpu nor cgroup v2 with cpu)';
}

function writable(dir: string): boolean {
  const probe = path.join(dir, `stockroom-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * A new cgroup capped at `cores` of one core (e.g. 0.1; undefined: no cap), or the reason why none can be made
 * here. Several at once give each process a cap of its own. `weight` multiplies the default weight the scheduler
 * gives the cgroup against every other task of the machine (v1 `cpu.shares`, v2 `cpu.weight`): on a shared
 * machine whose load average is far above its cores, a cgroup of default weight gets only its share of the cores
 * however little its cap, so the neighbours, not the cap, would limit it.
 */
export function cpuCap(name: string, cores: number | undefined, weight = 1): CpuCap | string {
  const base = cgroupBase();
  if (typeof base === 'string') return base;
  const dir = path.join(base.dir, name);
  try {
    mkdirSync(dir);
    const quota = cores === undefined ? undefined : Math.round(cores * PERIOD_US);
    if (base.version === 1) {
      writeFileSync(path.join(dir, 'cpu.shares'), String(Math.min(Math.round(1024 * weight), 262_144)));
      writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      if (quota !== undefined) writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota));
    } else {
      writeFileSync(path.join(dir, 'cpu.weight'), String(Math.min(Math.round(100 * weight), 10_000)));
      if (quota !== undefined) writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
    }
  } catch (error) {
    return `cannot create the cgroup ${dir}: ${(error as Error).message}`;
  }
  const procs = (at: string) => path.join(at, 'cgroup.procs');
  return {
    path: dir,
    throttling: () => {
      const stat = new Map(
        readFileSync(path.join(dir, 'cpu.stat'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map(line => line.split(' ') as [string, string]),
      );
      const number = (key: string) => Number(stat.get(key) ?? 0);
      return {
        periods: number('nr_periods'),
        throttled: number('nr_throttled'),
        throttledMs: base.version === 1 ? number('throttled_time') / 1e6 : number('throttled_usec') / 1e3,
      };
    },
    add: pid => {
      for (const member of processTree(pid))
        try {
          writeFileSync(procs(dir), String(member));
        } catch (error) {
          // A process that exited meanwhile (ESRCH) has nothing left to cap.
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
        }
    },
    remove: async () => {
      for (let attempt = 0; ; attempt++) {
        for (const member of readFileSync(procs(dir), 'utf8').split('\n').filter(Boolean))
          try {
            writeFileSync(procs(base.dir), member);
          } catch {
            // exited meanwhile
          }
        try {
          rmdirSync(dir);
          return;
        } catch (error) {
          // EBUSY while a process that exited is not reaped yet.
          if (attempt >= 50) throw error;
          await new Promise(resolve => setTimeout(resolve, 100));
        }
      }
    },
  };
}
