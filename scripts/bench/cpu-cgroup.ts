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
}

const PERIOD_US = 100_000;

/**
 * Where this process's cgroups live: the cgroup v1 `cpu` controller's directory of this process
 * (`cpu.cfs_quota_us`), or the cgroup v2 directory of this process when its controllers include `cpu`
 * (`cpu.max`). Undefined, with the reason, when neither can be written (not root, no controller, a container
 * without a writable cgroup file system).
 */
function cgroupBase(): { version: 1 | 2; dir: string } | string {
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
 * A new cgroup capped at `cores` of one core (e.g. 0.1), or the reason why none can be made here. Several at once
 * give each process a cap of its own.
 */
export function cpuCap(name: string, cores: number): CpuCap | string {
  const base = cgroupBase();
  if (typeof base === 'string') return base;
  const dir = path.join(base.dir, name);
  try {
    mkdirSync(dir);
    const quota = Math.round(cores * PERIOD_US);
    if (base.version === 1) {
      writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota));
    } else writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
  } catch (error) {
    return `cannot create the cgroup ${dir}: ${(error as Error).message}`;
  }
  const procs = (at: string) => path.join(at, 'cgroup.procs');
  return {
    path: dir,
    add: pid => {
      for (const member of processTree(pid)) writeFileSync(procs(dir), String(member));
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
