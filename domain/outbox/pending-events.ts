import type { SqlRun } from '../shared/native-transaction.js';
import type { StockChangedPayload } from './events.js';
import type { OutboxConsumer } from './consumers.js';

export interface PendingEvent {
  id: string;
  type: string;
  payload: StockChangedPayload;
}

/**
 * The oldest pending events of `consumer` in the partitions `parts` (of one item when given), in id order, at most
 * `limit`. A plain read: the caller holds the partition's lock (drainConsumer), applies them and marks them
 * with `markEventsDone` as the LAST statement of its transaction, so each event takes effect exactly once and
 * the outbox rows - which the other consumers update too - stay locked only for that statement and the commit.
 */
export async function pendingEvents(
  sql: SqlRun,
  consumer: OutboxConsumer,
  parts: number[],
  limit: number,
  itemId?: string,
): Promise<PendingEvent[]> {
  return sql<PendingEvent>(
    `select o.id::text as id, o.type, o.payload from outbox_event o
      where o.part = any($1::int[]) and o.${consumer.marker} is null and ($3::text is null or o.aggregate_id = $3)
      order by o.id limit $2`,
    [parts, limit, itemId ?? null],
  );
}

/**
 * Sets the consumer's marker on events read as pending; throws (rolls back) if one was taken meanwhile. The rows
 * are locked in id order first: the consumers mark the same outbox rows, and any two of them locking rows in
 * different orders would deadlock.
 */
export async function markEventsDone(sql: SqlRun, consumer: OutboxConsumer, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await sql<{ n: string }>(
    `with locked as (select id from outbox_event where id = any($1::bigint[]) and ${consumer.marker} is null
                     order by id for update),
          marked as (update outbox_event o set ${consumer.marker} = clock_timestamp() from locked
                     where o.id = locked.id returning 1)
     select count(*) as n from marked`,
    [ids],
  );
  if (Number(rows[0].n) !== ids.length)
    throw new Error(`${consumer.name}: ${ids.length - Number(rows[0].n)} events were already done`);
}
