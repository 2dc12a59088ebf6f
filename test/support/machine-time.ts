import { availableParallelism, loadavg } from 'node:os';

/**
 * A test's own time bound (how long it waits for a process to start, a drain to finish, an answer to come)
 * stretched by how busy the machine is: with more runnable work than cores, everything takes longer in
 * proportion. Bounds that are the contract's own (lock timeouts, probe deadlines) are never scaled.
 */
export function scaled(ms: number): number {
  const busy = loadavg()[0] / availableParallelism();
  return Math.round(ms * Math.max(1, busy));
}
