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
 * Every pending `stock.changed` event of one item up to `uptoId` for `consumer`, in id order. A plain read:
 * the caller holds the item's consumer lock (so no other run of this consumer takes them), applies them and
 * then marks them with `markEventsDone` as the LAST statement of the same transaction, so each event takes
 * effect exactly once, an item's events always take effect in order (for one item, the write path's row lock
 * makes event ids follow commit order), and the outbox rows - which the other consumers update too - stay
 * locked only for that last statement and the commit.
 */
export async function pendingItemEvents(
  em: EntityManager,
  consumer: Exclude<Consumer, 'history'>,
  itemId: string,
  uptoId: string,
): Promise<PendingItemEvent[]> {
  const marker = CONSUMER_MARKERS[consumer];
  const rows = await em.execute<{ id: string; payload: StockChangedPayload }[]>(
    `select id, payload from outbox_event
     where type = ? and aggregate_id = ? and ${marker} is null and id <= ? order by id`,
    [STOCK_CHANGED, itemId, uptoId],
  );
  return rows.map(r => ({ id: String(r.id), payload: r.payload }));
}

/**
 * The oldest pending events of `consumer` (any type; of one aggregate when given), in id order, at most
 * `limit`. A plain read, like `pendingItemEvents`: the caller runs single-flight and marks them done last,
 * with `markEventsDone`.
 */
export async function pendingEvents(
  em: EntityManager,
  consumer: Exclude<Consumer, 'history'>,
  limit: number,
  aggregateId?: string,
): Promise<(PendingItemEvent & { type: string })[]> {
  const marker = CONSUMER_MARKERS[consumer];
  const rows = await em.execute<{ id: string; type: string; payload: StockChangedPayload }[]>(
    `select id, type, payload from outbox_event
     where ${marker} is null ${aggregateId === undefined ? '' : 'and aggregate_id = ?'} order by id limit ?`,
    aggregateId === undefined ? [limit] : [aggregateId, limit],
  );
  return rows.map(r => ({ id: String(r.id), type: r.type, payload: r.payload }));
}

/** Whether any event is pending for `consumer` (an index look-up on its partial pending index). */
export async function hasPendingEvents(
  em: EntityManager,
  consumer: Exclude<Consumer, 'history'>,
): Promise<boolean> {
  const marker = CONSUMER_MARKERS[consumer];
  const rows = await em.execute<{ pending: boolean }[]>(
    `select exists (select 1 from outbox_event where ${marker} is null) as pending`,
  );
  return rows[0].pending;
}

/** Sets the consumer's marker on events read as pending; throws (rolls back) if one was taken meanwhile. */
export async function markEventsDone(
  em: EntityManager,
  consumer: Exclude<Consumer, 'history'>,
  ids: string[],
): Promise<void> {
  const marker = CONSUMER_MARKERS[consumer];
  const rows = await em.execute<{ n: string }[]>(
    `with marked as (update outbox_event set ${marker} = now()
                     where id in (select jsonb_array_elements_text(?::jsonb)::bigint) and ${marker} is null
                     returning 1)
     select count(*) as n from marked`,
    [JSON.stringify(ids)],
  );
  if (Number(rows[0].n) !== ids.length)
    throw new Error(`${consumer}: ${ids.length - Number(rows[0].n)} events were already done`);
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
