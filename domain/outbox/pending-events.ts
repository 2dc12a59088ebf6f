import { textCache, type SqlRun } from '../shared/native-transaction.js';
import { byKey } from '../shared/sql.js';
import type { OutboxConsumer } from './consumers.js';
import type { ConsumerBatch } from './drain-consumer.js';

/*
 * How a consumer batch marks its events: it reads the pending events of the partitions it holds (a plain read,
 * in id order), applies them and sets its marker (`done_at` of its own outbox_pending rows) on exactly those
 * events in the statement that applies them (markedCte, allMarkedCheck), so each event takes effect exactly once.
 */

/**
 * The ids (and partitions) of the oldest pending events of the partitions `parts` (an int[] expression), of one
 * item when `itemId` (a text expression) is not null, in id order, at most `limit`: a scan of the consumer's rows
 * per partition (outbox_pending_idx), each stopping at `limit` entries (for `part = any(...)` PostgreSQL reads
 * and sorts every pending entry of all the partitions, a whole backlog for a batch of a few events).
 */
export const pendingIdsSql = (
  consumer: OutboxConsumer,
  parts: string,
  limit: string,
  itemId: string,
): string =>
  `select q.id, p.part from unnest(${parts}) as p(part),
     lateral (select x.id from outbox_pending x
               where x.consumer = ${consumer.code} and x.part = p.part and x.done_at is null
                 and (${itemId}::text is null
                      or exists (select 1 from outbox_event e where e.id = x.id and e.aggregate_id = ${itemId}))
               order by x.id limit ${limit}) q
    order by q.id limit ${limit}`;

/**
 * "The outbox event `alias` (a row of outbox_event) is still pending for any of `consumers`", an SQL condition:
 * one probe of the pending index per consumer.
 */
export const pendingForSql = (consumers: readonly OutboxConsumer[], alias: string): string =>
  `exists (select 1 from outbox_pending x
            where x.consumer in (${consumers.map(c => c.code).join(', ')}) and x.part = ${alias}.part
              and x.id = ${alias}.id and x.done_at is null)`;

/**
 * The same events as rows `id, type, payload` (a subquery for a consumer's batch read), in no particular order.
 * Each row is fetched by its id (byKey): a join could be planned as a scan of the whole outbox.
 */
export const pendingEventsSql = (
  consumer: OutboxConsumer,
  parts: string,
  limit: string,
  itemId: string,
): string =>
  `select e.id, e.type, e.payload from (${pendingIdsSql(consumer, parts, limit, itemId)}) i
     cross join lateral ${byKey('select e.id, e.type, e.payload from outbox_event e where e.id = i.id')} e`;

/**
 * A held batch's first statement (HeldBatch): takes its partitions (`take`, parameters $1-$3) and reads their
 * pending events with `read` (given the partitions as an int[] expression) in the same round trip; one row per
 * event, each with the partitions taken (one row of nulls but `parts` when there is no event). When it took no
 * partition it gives back the rebuild lock the take held (pg_advisory_unlock_all), so a run that ends on an
 * empty take needs no statement more.
 */
const takeAndReadSql = (take: string, read: (parts: string) => string): string => `
with parts as materialized (${take})
select t.parts::text as parts,
       case when cardinality(t.parts) = 0 then (select true from (select pg_advisory_unlock_all()) r) end as released,
       b.*
  from (select coalesce(array_agg(part), '{}') as parts from parts) t
  left join lateral (${read('(select array_agg(part) from parts)')}) b on true`;

/**
 * Runs a takeAndReadSql statement: sets `taken.parts` and returns the events in id order. The partitions come
 * with every row, as text (`{1,2}`), so that only the first row's are parsed (as an int[], every row's were).
 */
async function takeAndRead<T extends { id: string }>(
  run: SqlRun,
  text: string,
  params: unknown[],
  taken: { parts: number[] },
): Promise<T[]> {
  const rows = await run<T & { parts: string }>(text, params);
  const parts = rows[0]?.parts.slice(1, -1) ?? '';
  taken.parts = parts === '' ? [] : parts.split(',').map(Number);
  // Ids are decimal strings; the lateral join does not promise the read's order, though it nearly always keeps
  // it: a pass that finds them in order saves the sort's comparisons (a few per event).
  const events = rows[0]?.id === null ? [] : rows;
  for (let i = 1; i < events.length; i++) if (byId(events[i - 1], events[i]) > 0) return events.sort(byId);
  return events;
}

const byId = (a: { id: string }, b: { id: string }): number =>
  a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The statement that sets the consumer's marker on its pending rows of the events `events` (a select of their
 * `id` and `part`), returning the id of each event it marked. Only this consumer's runs write its rows, and no
 * two of them hold the same partition, so nothing waits here; a row another run marked after the statement's
 * snapshot is re-checked and skipped. Each row is found by key (byKey: one index probe per event) and updated
 * by its address (`ctid = any(...)`, a TID scan): joined with the batch, or with the ids as array conditions,
 * the update was planned from statistics taken while nothing was pending, as a pass over every pending row
 * for every batch of a backlog. Its re-check of `done_at` is written so that it does not
 * match the pending index's predicate: written `done_at is null`, PostgreSQL took the index (believed empty)
 * over the TID scan and read all of it. The marker is a clock time, never infinity.
 */
export const markDoneSql = (consumer: OutboxConsumer, events: string): string =>
  `update outbox_pending x set done_at = clock_timestamp()
    where x.ctid = any(array(
            select p.ctid from (${events}) k
             cross join lateral ${byKey(`select r.ctid from outbox_pending r
                                          where r.consumer = ${consumer.code} and r.part = k.part and r.id = k.id
                                            and r.done_at is null`)} p))
      and coalesce(x.done_at, 'infinity') = 'infinity'
    returning x.id`;

/** markDoneSql for the events whose ids are the bigint array `param` (their partitions read from the outbox). */
const markDoneStatement = (consumer: OutboxConsumer, param: string): string =>
  markDoneSql(
    consumer,
    `select e.id, e.part from unnest(${param}::bigint[]) as t(id)
      cross join lateral ${byKey('select e.id, e.part from outbox_event e where e.id = t.id')} e`,
  );

/**
 * The marker update of a consumer's batch statement as a CTE named `marked` (the events whose ids are the
 * bigint array `param`), and the select-list expression that fails the statement (so its effects roll back with
 * it) unless it marked all `count` of them: an event another run applied meanwhile must not take effect twice.
 * The failure is a text that does not cast to int (SQL has no `raise`; concat() is not folded at planning).
 */
export const markedCte = (consumer: OutboxConsumer, param: string): string =>
  `marked as (${markDoneStatement(consumer, param)})`;

export const allMarkedCheck = (consumer: OutboxConsumer, count: string): string =>
  `case when (select count(*) from marked) <> ${count}
        then concat('${consumer.name}: ${ALREADY_DONE}: ', ${count} - (select count(*) from marked))::int
        end as all_marked`;

const ALREADY_DONE = 'events were already done';

/** Whether a batch statement failed allMarkedCheck (and so rolled back). */
export const failedAsAlreadyDone = (error: unknown): boolean =>
  error instanceof Error &&
  (error as { code?: string }).code === '22P02' &&
  error.message.includes(ALREADY_DONE);

/**
 * A held batch's apply, once more on a fresh read if its events turn out to have been applied meanwhile: the
 * read of takeAndReadSql has its statement's snapshot, taken BEFORE the statement locked its partitions, so a
 * partition that another run released just then (its last batch committed after that snapshot) is read as it
 * was: events still pending that are done, its items' state before them. allMarkedCheck refuses such a batch
 * (any stale state comes with an event that is already marked: a batch reads the oldest pending events of a
 * partition, so an item's stale events come before its others); `reread` then reads in a new statement, while
 * the partitions are still held, so its snapshot sees every batch committed before. Rare, but it happens under
 * load.
 */
async function applyFresh<T>(
  events: T[],
  apply: (events: T[]) => Promise<number>,
  reread: () => Promise<T[]>,
): Promise<number> {
  try {
    return await apply(events);
  } catch (error) {
    if (!failedAsAlreadyDone(error)) throw error;
    return apply(await reread());
  }
}

/**
 * A consumer's batch made of its read of pending events and its write: `read(parts, limit, itemId)` is the read
 * (SQL expressions: the partitions as an int[], the bound, the item or null, in id order), `write` applies the
 * events and sets their markers in ONE statement and returns how many. In the caller's transaction (the fallback
 * of a failed batch) it reads the partitions the transaction holds; its `held` fast path (HeldBatch) takes the
 * partitions and reads in one autocommit statement, writes in another, and reads again while still holding them
 * when the first read was stale (applyFresh).
 */
export function pendingBatch<T extends { id: string }>(
  read: (parts: string, limit: string, itemId: string) => string,
  write: (sql: SqlRun, events: T[]) => Promise<number>,
): ConsumerBatch {
  const readInTransaction = read('$1::int[]', '$2', '$3');
  const batch: ConsumerBatch = async (sql, parts, limit, itemId) =>
    write(sql, await sql<T>(readInTransaction, [parts, limit, itemId ?? null]));
  // The held statement of each take text (a few per consumer; takePartitionsSql gives the same string back).
  const heldTexts = textCache();
  const heldSql = (take: string) => takeAndReadSql(take, parts => read(parts, '$4', 'null'));
  batch.held = async (run, take, params, limit, taken) =>
    applyFresh(
      await takeAndRead<T>(run, heldTexts(take, heldSql), [...params, limit], taken),
      events => write(run, events),
      () => run<T>(readInTransaction, [taken.parts, limit, null]),
    );
  return batch;
}
