import type { SqlRun } from '../shared/native-transaction.js';
import { ASYNC_COMMIT_SQL, type OutboxConsumer } from './consumers.js';

/*
 * How a consumer batch marks its events: it reads the pending events of the partitions it holds (a plain read,
 * in id order), applies them and sets its marker on exactly those events as the LAST thing of its transaction,
 * so each event takes effect exactly once and the outbox rows - which the other consumers update too - stay
 * locked only for that statement and the commit.
 */

/**
 * The ids of the oldest pending events of the partitions `parts` (an int[] expression), of one item when
 * `itemId` (a text expression) is not null, in id order, at most `limit`: a scan of the consumer's pending
 * index per partition, each stopping at `limit` entries (for `part = any(...)` PostgreSQL reads and sorts every
 * pending entry of all the partitions, a whole backlog for a batch of a few events).
 */
export const pendingIdsSql = (
  consumer: OutboxConsumer,
  parts: string,
  limit: string,
  itemId: string,
): string =>
  `select q.id from unnest(${parts}) as p(part),
     lateral (select id from outbox_event
               where part = p.part and ${consumer.marker} is null and (${itemId}::text is null or aggregate_id = ${itemId})
               order by id limit ${limit}) q
    order by q.id limit ${limit}`;

/** The same events as rows `id, type, payload` (a subquery for a consumer's batch read), in no particular order. */
export const pendingEventsSql = (
  consumer: OutboxConsumer,
  parts: string,
  limit: string,
  itemId: string,
): string =>
  `select e.id, e.type, e.payload from (${pendingIdsSql(consumer, parts, limit, itemId)}) i
     join outbox_event e on e.id = i.id`;

/**
 * "`alias`'s row is still pending for the consumer", for a row looked up by id. Written so that PostgreSQL cannot
 * answer it with the consumer's pending index: that index's statistics swing between empty and thousands of
 * entries, and a plan that scans all of it for every id (what the planner picks when it believes it holds a
 * row or two) costs O(pending x batch). The marker is a clock time, never infinity.
 */
export const stillPending = (consumer: OutboxConsumer, alias: string): string =>
  `coalesce(${alias}.${consumer.marker}, 'infinity') = 'infinity'`;

/**
 * The statement that sets the consumer's marker on the pending events whose ids are the bigint array
 * `param`, returning one row per event it marked. The rows are locked in id order first: the consumers mark the
 * same outbox rows, and any two of them locking rows in different orders would deadlock.
 */
const markDoneStatement = (consumer: OutboxConsumer, param: string): string =>
  `update outbox_event o set ${consumer.marker} = clock_timestamp()
     from (select e.id from unnest(${param}::bigint[]) as t(id) join outbox_event e on e.id = t.id
            where ${stillPending(consumer, 'e')} order by e.id for update of e) locked
    where o.id = locked.id returning 1`;

/**
 * Sets the consumer's marker on events read as pending; throws (rolls back) if one was taken meanwhile. With
 * `asyncCommit` the transaction then commits without waiting for the WAL flush (see OutboxConsumer.asyncCommit:
 * only when its effects stay inside PostgreSQL).
 */
export async function markEventsDone(
  sql: SqlRun,
  consumer: OutboxConsumer,
  ids: string[],
  options: { asyncCommit?: boolean } = {},
): Promise<void> {
  if (ids.length === 0) return;
  const rows = await sql<{ n: string }>(
    `with marked as (${markDoneStatement(consumer, '$1')})
     select count(*) as n${options.asyncCommit ? `, ${ASYNC_COMMIT_SQL}` : ''} from marked`,
    [ids],
  );
  if (Number(rows[0].n) !== ids.length)
    throw new Error(`${consumer.name}: ${ids.length - Number(rows[0].n)} events were already done`);
}
