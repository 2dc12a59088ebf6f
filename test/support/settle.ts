import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../config/services.js';
import { scaled } from './machine-time.js';
import { waitFor } from './wait-for.js';
import { pendingForSql } from '../../domain/outbox/pending-events.js';
import {
  ALERTS_CONSUMER,
  ANALYTICS_CONSUMER,
  STOCK_HISTORY_CONSUMER,
} from '../../domain/outbox/consumers.js';

/**
 * Waits until no outbox event is pending for the stock-history consumer (polls the database; never a fixed
 * sleep). Throws with the pending count after `timeoutMs`.
 */
export async function waitForHistorySettled(services: Services, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + scaled(timeoutMs);
  for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
    const rows = await services.orm.em
      .fork()
      .execute<{ n: string }[]>(
        `select count(*) as n from outbox_event o where ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}`,
      );
    const pending = Number(rows[0].n);
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`stock history not settled: ${pending} events pending`);
    await new Promise(resolve => setTimeout(resolve, delay));
  }
}

/** Waits until the analytics and low-stock consumers have set their markers on every event of these items. */
export async function waitForItemConsumersDone(
  em: EntityManager,
  itemIds: string[],
  timeoutMs: number,
  what: string,
): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await em.execute<{ n: string }[]>(
        `select count(*) as n from outbox_event o where aggregate_id = any(string_to_array(?, ','))
           and ${pendingForSql([ANALYTICS_CONSUMER, ALERTS_CONSUMER], 'o')}`,
        [itemIds.join(',')],
      );
      return Number(row.n) === 0;
    },
    timeoutMs,
    what,
  );
}
