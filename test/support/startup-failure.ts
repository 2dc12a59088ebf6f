import type { ChildProcess } from 'node:child_process';
import { waitForExit } from './spawn-stockroom.js';

export interface StartupFailure {
  code: number | null;
  /** From the spawn to the exit. */
  ms: number;
  output: string;
  /** The non-empty lines of the output (a clear start-up failure is exactly one). */
  lines: string[];
}

/** Waits (at most 30 s) for a process that should refuse to start, and what it said. */
export async function startupFailure(
  child: ChildProcess & { output: () => string },
): Promise<StartupFailure> {
  const started = Date.now();
  try {
    const code = await waitForExit(child, 30000);
    const output = child.output();
    return { code, ms: Date.now() - started, output, lines: output.split('\n').filter(line => line.trim()) };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}
