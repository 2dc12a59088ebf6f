import type { Services } from '../../config/services.js';

/**
 * Waits until no outbox event is pending for the stock-history consumer (polls the database; never a fixed
 * sleep). Throws with the pending count after `timeoutMs`.
 */
export async function waitForHistorySettled(services: Services, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
    const rows = await services.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from outbox_event where history_done_at is null');
    const pending = Number(rows[0].n);
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`stock history not settled: ${pending} events pending`);
    await new Promise(resolve => setTimeout(resolve, delay));
  }
}
