import { scaled } from './machine-time.js';

/**
 * Polls `probe` until it returns a truthy value or the deadline passes (tests never sleep a fixed time). The
 * deadline stretches with the machine's load (machine-time.ts).
 */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  timeoutMs = 10000,
  what = 'condition',
): Promise<T> {
  const limit = scaled(timeoutMs);
  const deadline = Date.now() + limit;
  let delay = 5;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${limit} ms waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 100);
  }
}
