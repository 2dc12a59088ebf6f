import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processAlive } from '../../domain/shared/process-alive.js';

/** The file that says which process bench has this machine (its pid, then its command line). */
const LOCK_FILE = path.join(os.tmpdir(), 'stockroom-bench.lock');

let held = false;

/**
 * Takes this machine for the running benchmark, or throws when another process bench has it: two benches at
 * once share the two cores, and each one's figures (ratios too: the rounds of one side meet the other's load
 * and not the other side's) then say nothing. A bench whose process has died leaves the file behind; the next
 * one finds its pid gone and takes the machine. Each bench calls it first, before it touches its database (a
 * second bench used to find the machine taken only when it started its first process, after it had dropped the
 * first one's schema), and again when it starts a process; held until it exits. BENCH_SHARED_MACHINE=1 skips it
 * (a bench run on purpose beside another load).
 */
export function holdMachineForBench(): void {
  if (held || process.env.BENCH_SHARED_MACHINE === '1') return;
  for (;;) {
    try {
      const fd = openSync(LOCK_FILE, 'wx');
      writeSync(fd, `${process.pid}\n${process.argv.slice(1).join(' ')}\n`);
      closeSync(fd);
      held = true;
      process.once('exit', release);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [pid, command] = readOr(LOCK_FILE).split('\n');
    const owner = Number(pid);
    if (Number.isInteger(owner) && owner > 0 && processAlive(owner))
      throw new Error(
        `another benchmark runs on this machine (pid ${pid}: ${command}); wait for it to end, or set ` +
          `BENCH_SHARED_MACHINE=1 to run beside it (${LOCK_FILE})`,
      );
    // Left by a bench that died: the machine is free.
    try {
      unlinkSync(LOCK_FILE);
    } catch {
      // another bench took it meanwhile: the next attempt finds its pid
    }
  }
}

function release(): void {
  if (readOr(LOCK_FILE).startsWith(`${process.pid}\n`)) unlinkSync(LOCK_FILE);
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
