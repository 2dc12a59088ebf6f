import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type pg from 'pg';
import { processTree } from './processes.js';

const TICKS_PER_SECOND = 100;

/** Local TCP ports of the sockets held open by the process tree rooted at `pid` (Linux /proc). */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const member of processTree(pid)) {
    try {
      for (const fd of readdirSync(`/proc/${member}/fd`)) {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${member}/fd/${fd}`));
        if (match) inodes.add(match[1]);
      }
    } catch {
      // exited meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6'])
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length > 9 && inodes.has(fields[9])) ports.add(parseInt(fields[1].split(':')[1], 16));
    }
  return ports;
}

/**
 * CPU time (user + system, ms) used so far by each PostgreSQL backend that serves the process tree rooted at
 * `pid`, by backend pid: its connections are matched to `pg_stat_activity` by client port, the backends' CPU
 * read from /proc (the server runs on this machine).
 */
export async function backendCpuMs(pool: pg.Pool, pid: number): Promise<Map<number, number>> {
  const ports = localPorts(pid);
  const { rows } = await pool.query<{ pid: number; client_port: number }>(
    `select pid, client_port from pg_stat_activity where datname = current_database() and client_port is not null`,
  );
  const cpu = new Map<number, number>();
  for (const row of rows.filter(r => ports.has(r.client_port))) {
    try {
      const stat = readFileSync(`/proc/${row.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu.set(row.pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND);
    } catch {
      // exited meanwhile
    }
  }
  return cpu;
}

/** CPU (ms) the backends used between two readings (a backend opened in between counts from 0). */
export const backendCpuSince = (before: Map<number, number>, after: Map<number, number>): number =>
  [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);

/** The whole machine's CPU time so far (/proc/stat, in ticks): busy (all but idle and iowait) and in all. */
export function machineCpu(): { busy: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, t) => sum + t, 0);
  return { busy: total - ticks[3] - ticks[4], total };
}

/** The share of the machine's cores that were busy between two machineCpu readings, in %. */
export const busyShare = (before: { busy: number; total: number }, after: { busy: number; total: number }) =>
  (100 * (after.busy - before.busy)) / Math.max(after.total - before.total, 1);
