import { spawn, type ChildProcess } from 'node:child_process';
import { scaled } from './machine-time.js';
import { waitFor } from './wait-for.js';

/** Runs `scripts/start-all.ts` as a child process with the given role flags and environment. */
export function spawnStockroom(
  args: string[],
  env: NodeJS.ProcessEnv,
): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start-all.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return Object.assign(child, { output: () => output });
}

export async function waitForExit(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const limit = scaled(timeoutMs);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`process did not exit within ${limit} ms`)), limit);
    child.once('exit', code => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

export async function waitForHttp(url: string, timeoutMs = 20000): Promise<void> {
  await waitFor(
    async () => {
      try {
        return (await fetch(url)).ok;
      } catch {
        return false;
      }
    },
    timeoutMs,
    url,
  );
}
