import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED, type StockChangedPayload } from './events.js';

/** The per-consumer completion markers of `outbox_event` (a whitelist: column names never come from input). */
export const CONSUMER_MARKERS = {
  history: 'history_done_at',
  alerts: 'alerts_done_at',
  analytics: 'analytics_done_at',
} as const;
export type Consumer = keyof typeof CONSUMER_MARKERS;

export interface PendingItemEvent {
  id: string;
  payload: StockChangedPayload;
}

/**
 * Marks every pending `stock.changed` event of one item up to `uptoId` as done for `consumer` and returns
 * them in id order. The caller holds the item's lock and applies them in the same transaction, so each event
 * takes effect exactly once and an item's events always take effect in order (for one item, the write path's
 * row lock makes event ids follow commit order).
 */
export async function takeItemEvents(
  em: EntityManager,
  consumer: Exclude<Consumer, 'history'>,
  itemId: string,
  uptoId: string,
): Promise<PendingItemEvent[]> {
  const marker = CONSUMER_MARKERS[consumer];
  const rows = await em.execute<{ id: string; payload: StockChangedPayload }[]>(
    `update outbox_event set ${marker} = now()
     where type = ? and aggregate_id = ? and ${marker} is null and id <= ?
     returning id, payload`,
    [STOCK_CHANGED, itemId, uptoId],
  );
  return rows
    .map(r => ({ id: String(r.id), payload: r.payload }))
    .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}

/** The event row a job points at: null when it is gone or already done for the consumer. */
export async function pendingEvent(
  em: EntityManager,
  consumer: Exclude<Consumer, 'history'>,
  eventId: string,
): Promise<{ id: string; type: string; aggregateId: string } | null> {
  const marker = CONSUMER_MARKERS[consumer];
  const rows = await em.execute<{ id: string; type: string; aggregate_id: string }[]>(
    `select id, type, aggregate_id from outbox_event where id = ? and ${marker} is null`,
    [eventId],
  );
  if (rows.length === 0) return null;
  return { id: String(rows[0].id), type: rows[0].type, aggregateId: rows[0].aggregate_id };
}

/** Marks an event this consumer does not handle (another type) as done. */
export async function markDone(em: EntityManager, consumer: Exclude<Consumer, 'history'>, eventId: string) {
  const marker = CONSUMER_MARKERS[consumer];
  await em.execute(`update outbox_event set ${marker} = now() where id = ? and ${marker} is null`, [eventId]);
}
