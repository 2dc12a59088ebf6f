import { setTimeout as delay } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ASYNC_COMMIT_SQL, NO_LOCK_TIMEOUT_SQL, type OutboxConsumer } from './consumers.js';
import { REBUILD_LOCK_SHARED, REBUILD_LOCK_SHARED_SESSION } from './rebuild-lock.js';
import { CUSTOM_PLANS_SQL } from './plan-settings.js';
import { consumerPool } from './consumer-pool.js';
import {
  nativePool,
  nativeTransaction,
  preparedRun,
  textCache,
  type SqlRun,
} from '../shared/native-transaction.js';

/** Partitions of the outbox (`outbox_event.part`, migration OutboxPartitions). */
export const OUTBOX_PARTITIONS = 16;

/**
 * Events per consumer transaction at most (an item's events may be split across batches; they stay in id
 * order). While a consumer keeps up its batches are far smaller; in a backlog, larger batches drain markedly
 * faster for a little more worker memory at peak (docs/performance.md).
 */
export const CONSUMER_BATCH = 1000;

/**
 * Applies up to `limit` pending events of the partitions `parts` (of one item when given) in id order inside
 * the caller's transaction and sets the consumer's marker on them in the same transaction; returns how many.
 * `held`, when the consumer has one, is the same batch in two autocommit statements (HeldBatch): drainConsumer
 * takes it as its fast path and keeps this one as the fallback of a failed batch.
 */
export type ConsumerBatch = ((
  sql: SqlRun,
  parts: number[],
  limit: number,
  itemId?: string,
) => Promise<number>) & {
  held?: HeldBatch;
};

/**
 * A batch in two round trips on a connection the run keeps, for consumers whose batch needs work in between
 * (the analytics fold, the alerts' walk per item): the first statement is `take` (a select with a `part` column
 * whose partitions it locks with SESSION advisory locks, held from one statement to the next; its parameters are
 * $1-$3) together with the batch's read, the second applies the batch and sets its markers in ONE autocommit
 * statement (effects and markers commit together). The locks are released by the next take, by the run's last
 * look or when the run ends, never while a batch is between its two statements, so no other run can apply the
 * same events meanwhile. Sets `taken.parts` as soon as it knows them (a failed apply falls back on them) and
 * returns how many events it applied. Two round trips instead of seven (take, begin, read, writes, markers,
 * commit): under load each round trip waits to be scheduled on saturated cores.
 */
export type HeldBatch = (
  run: SqlRun,
  take: string,
  params: unknown[],
  limit: number,
  taken: { parts: number[] },
) => Promise<number>;

/**
 * While a consumer keeps up (its last batch was not full), a run starts its batches at least this far apart: the
 * events of those milliseconds share one batch, whose cost is mostly per batch (round trips, statement start,
 * the worker's share of each), instead of the next take starting as soon as the last commits. It trades a few
 * milliseconds of median lag for much less CPU per event (docs/performance.md has the spacings measured). A
 * backlog (full batches) never waits.
 */
export const BATCH_SPACING_MS = 8;

/**
 * How long a run goes on looking (a take every BATCH_SPACING_MS) once a take finds nothing pending, before it
 * ends; a batch that applies something starts the wait anew. Under a steady stream with short gaps the run
 * stays on its connection and picks up the next events at its next take, instead of ending at each gap and
 * leaving them to a doorbell job (Redis round trips, the job's start, a new run); an idle consumer pays a few
 * empty takes once (docs/performance.md).
 */
export const RUN_LINGER_MS = 40;

export interface DrainOptions {
  batchSize?: number;
  /** Consumers whose effects a rebuild replaces hold the rebuild lock shared (a rebuild holds it exclusively). */
  rebuildShared?: boolean;
  /** Called when a batch came back full: there is more than one batch of work, so a peer may help. */
  onBacklog?: () => void;
  /**
   * Settles (never rejects) once the doorbell that woke the run is free again, so that a ring from then on
   * queues a follow-up job. The run may start before: it then ends only on a take or look that started after
   * this settled (an event whose ring was dropped while the doorbell was still taken committed before that).
   */
  freed?: Promise<void>;
  /** Called when a batch fails (its partitions then fall back to one item at a time). */
  onBatchError?: (error: unknown, parts: number[]) => void;
  /** Called for every item whose events cannot be applied (they stay pending, in order). */
  onPoison?: (error: unknown, part: number, itemId: string) => void;
  /** The consumer's batch as one statement (its fast path; `apply` stays the fallback of a failed one). */
  oneStatement?: OneStatementBatch;
  /** Aborted at shutdown: the run ends between batches (each commits whole); the rest stays pending. */
  stopping?: AbortSignal;
}

export interface DrainResult {
  applied: number;
  batches: number;
  /** Items left pending because applying them failed. */
  failed: number;
}

/**
 * A batch that takes its partitions itself in ONE autocommit statement (the statement is its transaction, so
 * the advisory locks it takes last until its commit): `take` is the partition-taking select (a CTE with a
 * `part` column; its parameters are $1-$3) and $4 the batch size. Returns the partitions it took and how many
 * events it applied. One round trip per batch instead of four (begin, take, apply, commit).
 */
export type OneStatementBatch = (
  run: SqlRun,
  take: string,
  params: unknown[],
  limit: number,
) => Promise<{ parts: number[]; applied: number }>;

/**
 * Drains one consumer: takes the partitions (a few at a time) that have pending events and that no other
 * process is applying (`pg_try_advisory_xact_lock`), applies one batch of their events and commits, and so on
 * until no partition it can take has anything pending. Several runs (jobs in this or other worker processes)
 * share the partitions; an item's events stay in one partition, so they always apply in id order (for one item
 * the write path's row lock makes ids follow commit order). A batch that fails falls back to one transaction
 * per item of its partitions, so one bad event stalls only its own item.
 *
 * A batch takes just enough partitions to fill it, and no more: looking from where the last one stopped, each
 * partition with pending events that it can lock, counting their pending events, until they hold a full batch or
 * every partition was looked at. While the consumer keeps up, that is every partition with pending events (one
 * batch per wake-up applies everything pending); in a backlog deep enough to fill a batch from one partition,
 * one. So no run holds partitions it will not apply in its current batch: however many runs of a consumer work
 * (up to OUTBOX_PARTITIONS, one per process), each takes what is free, and a backlog's tail, spread over the
 * partitions, is shared out instead of being held by the run that happened to take it first. Each batch starts
 * looking at the partition after the last one the previous batch took: with a fixed start, the partitions at
 * the end of the order waited while the first ones kept refilling.
 *
 * When a batch was not full, its take looked at every partition and saw everything pending that it could take; the run then ends after one last look at its own partitions (events committed there while it held them
 * were skipped by the runs their doorbells woke). Partitions other runs held are theirs to look at again, and
 * every later event rings a doorbell of its own, so nothing waits for the sweeper.
 */
export async function drainConsumer(
  em: EntityManager,
  consumer: OutboxConsumer,
  apply: ConsumerBatch,
  options: DrainOptions = {},
): Promise<DrainResult> {
  const batchSize = options.batchSize ?? CONSUMER_BATCH;
  if (apply.held === undefined) {
    const runner = options.oneStatement
      ? statementRunner(em, consumer, apply, options.oneStatement, batchSize, options)
      : transactionRunner(em, consumer, apply, batchSize, options);
    return drain(em, consumer, apply, runner, batchSize, options);
  }
  // The run keeps one connection: its session advisory locks hold the partitions between the two statements.
  const client = await (await consumerPool(em)).connect();
  const session: Session = { run: preparedRun(client), holding: false };
  let broken = false;
  try {
    const runner = heldRunner(consumer, apply.held, session, batchSize, options);
    return await drain(em, consumer, apply, runner, batchSize, options);
  } finally {
    if (session.holding) await session.run(RELEASE_SQL).catch(() => (broken = true));
    client.release(broken);
  }
}

/** A run's own connection (of consumerPool) and whether it may still hold session advisory locks there (HeldBatch). */
interface Session {
  run: SqlRun;
  holding: boolean;
}

/**
 * How a run's batches take their partitions and apply their events: one runner per batch mode (TakeMode), so
 * that the run's loop (drain) knows nothing of connections, locks or statements.
 */
interface BatchRunner {
  /**
   * One batch: takes partitions from `start` on (none of `skip`), applies their pending events (up to the batch
   * size) and returns how many; sets `taken.parts` as soon as it knows them. On failure nothing was applied.
   */
  batch(start: number, skip: number[], taken: { parts: number[] }): Promise<number>;
  /**
   * After a failed batch: what the run goes on with. The runner itself (after giving back what the batch
   * held), whose batch's partitions then fall back to one item at a time; or another runner that retries
   * the batch (a one-statement batch does not say which partitions it took).
   */
  failed(): Promise<BatchRunner>;
  /**
   * Whether a short batch is followed by a look at its partitions before the run may end: its take looked at
   * every partition, but events may have been committed in its own while it held them. A batch that costs no
   * more than the look goes on to its next batch instead (while events keep coming, a look often finds some).
   */
  looksAfterShortBatch: boolean;
  /** Whether any event of `parts` is pending for the consumer (giving back the partitions the run holds). */
  anyPending(parts: number[]): Promise<boolean>;
}

/** `session` mode: a held batch (HeldBatch) on the run's own connection. */
function heldRunner(
  consumer: OutboxConsumer,
  held: HeldBatch,
  session: Session,
  batchSize: number,
  options: DrainOptions,
): BatchRunner {
  const take = takePartitionsSql(consumer, options.rebuildShared === true, batchSize, 'session');
  const runner: BatchRunner = {
    batch: async (start, skip, taken) => {
      session.holding = true;
      const n = await held(session.run, take, [start, skip, consumer.lockNamespace], batchSize, taken);
      // A take that took nothing gave the session back itself (takeAndReadSql).
      if (taken.parts.length === 0) session.holding = false;
      return n;
    },
    failed: async () => {
      // Nothing of the batch was applied: free its partitions for the fallback's transaction locks.
      await session.run(RELEASE_SQL);
      session.holding = false;
      return runner;
    },
    looksAfterShortBatch: false,
    anyPending: async parts => {
      const pending = await lookAt(session.run, consumer, parts, true);
      session.holding = false;
      return pending;
    },
  };
  return runner;
}

/** `statement` mode: a one-statement batch (OneStatementBatch) on consumerPool. */
function statementRunner(
  em: EntityManager,
  consumer: OutboxConsumer,
  apply: ConsumerBatch,
  oneStatement: OneStatementBatch,
  batchSize: number,
  options: DrainOptions,
): BatchRunner {
  const take = takePartitionsSql(consumer, options.rebuildShared === true, batchSize, 'statement');
  return {
    batch: async (start, skip, taken) => {
      const batch = await oneStatement(
        preparedRun(await consumerPool(em)),
        take,
        [start, skip, consumer.lockNamespace],
        batchSize,
      );
      taken.parts = batch.parts;
      return batch.applied;
    },
    // The statement does not say which partitions it took: find out the way every other consumer works.
    failed: async () => transactionRunner(em, consumer, apply, batchSize, options),
    looksAfterShortBatch: false,
    anyPending: async parts => lookAt(preparedRun(await consumerPool(em)), consumer, parts, false),
  };
}

/** `transaction` mode: take, read, write and markers in one transaction on the ORM's pool. */
function transactionRunner(
  em: EntityManager,
  consumer: OutboxConsumer,
  apply: ConsumerBatch,
  batchSize: number,
  options: DrainOptions,
): BatchRunner {
  const take = takePartitionsSql(consumer, options.rebuildShared === true, batchSize);
  const runner: BatchRunner = {
    batch: (start, skip, taken) =>
      nativeTransaction(em, async sql => {
        // The partitions with pending events that this transaction could lock, looking from `start` on, until
        // they hold a batch; the same statement takes the rebuild lock shared when asked and sets the commit
        // mode (one round trip; the lock is held before the batch reads anything).
        const rows = await sql<{ part: number }>(take, [start, skip, consumer.lockNamespace]);
        taken.parts = rows.map(row => Number(row.part));
        return taken.parts.length === 0 ? 0 : apply(sql, taken.parts, batchSize);
      }),
    failed: async () => runner,
    looksAfterShortBatch: true,
    anyPending: async parts => lookAt(preparedRun(await consumerPool(em)), consumer, parts, false),
  };
  return runner;
}

/**
 * The run's loop, the same for every batch mode: batches until a take or look finds nothing pending that it
 * can take (then the run lingers, see RUN_LINGER_MS), spaced while the consumer keeps up, a failed batch's
 * partitions one item at a time.
 */
async function drain(
  em: EntityManager,
  consumer: OutboxConsumer,
  apply: ConsumerBatch,
  first: BatchRunner,
  batchSize: number,
  options: DrainOptions,
): Promise<DrainResult> {
  const result: DrainResult = { applied: 0, batches: 0, failed: 0 };
  const poisoned: number[] = [];
  const pace = runPace(options.freed);
  let runner = first;
  let start = consumer.firstPartition;
  for (;;) {
    if (options.stopping?.aborted) return result;
    await pace.nextBatch();
    // Whether the doorbell was free when this take started (a run may end on it).
    let mayEnd = pace.freed;
    const taken: { parts: number[] } = { parts: [] };
    let n: number;
    try {
      n = await runner.batch(start, poisoned, taken);
    } catch (error) {
      const next = await runner.failed();
      if (next !== runner) {
        runner = next;
        continue;
      }
      if (taken.parts.length === 0) throw error;
      poisoned.push(...taken.parts);
      options.onBatchError?.(error, taken.parts);
      for (const part of taken.parts)
        await applyItemByItem(em, consumer, apply, part, batchSize, options, result);
      continue;
    }
    if (taken.parts.length === 0) {
      if (await pace.foundNothing(mayEnd)) return result;
      continue;
    }
    pace.applied(n, batchSize);
    result.applied += n;
    result.batches += 1;
    start = partitionAfter(start, taken.parts);
    if (n >= batchSize) options.onBacklog?.();
    else if (runner.looksAfterShortBatch || n === 0) {
      mayEnd = pace.freed;
      if (!(await runner.anyPending(taken.parts)) && (await pace.foundNothing(mayEnd))) return result;
    }
  }
}

/**
 * When a run's batches start and when it ends: batches at least BATCH_SPACING_MS apart while the consumer keeps
 * up (the last batch applied something but was not full); a take or look that finds nothing ends the run once
 * it has found nothing for RUN_LINGER_MS and the doorbell was free when that take or look started (`freed`),
 * else it waits for the doorbell to be freed and looks again.
 */
function runPace(freeing?: Promise<void>) {
  let freed = freeing === undefined;
  void freeing?.then(() => (freed = true));
  // When the run's last batch started, and whether it applied less than a full batch (but something).
  let lastStarted = 0;
  let keepingUp = false;
  // Until when a run that finds nothing goes on looking (RUN_LINGER_MS from its first take that found nothing).
  let lingerUntil: number | undefined;
  return {
    get freed() {
      return freed;
    },
    async nextBatch(): Promise<void> {
      if (keepingUp) {
        const wait = lastStarted + BATCH_SPACING_MS - performance.now();
        if (wait >= 1) await delay(wait);
      }
      lastStarted = performance.now();
      keepingUp = false;
    },
    applied(n: number, batchSize: number): void {
      if (n > 0) lingerUntil = undefined;
      keepingUp = n > 0 && n < batchSize;
    },
    /** A take or look found nothing: whether the run ends now (`mayEnd`: the doorbell was free when it started). */
    async foundNothing(mayEnd: boolean): Promise<boolean> {
      if (mayEnd) {
        lingerUntil ??= performance.now() + RUN_LINGER_MS;
        if (performance.now() >= lingerUntil) return true;
        keepingUp = true;
      }
      await freeing;
      return false;
    },
  };
}

/** The partition after the last of `parts` in the order that starts at `start` (where the next batch looks first). */
function partitionAfter(start: number, parts: number[]): number {
  const furthest = Math.max(...parts.map(part => (part - start + OUTBOX_PARTITIONS) % OUTBOX_PARTITIONS));
  return (start + furthest + 1) % OUTBOX_PARTITIONS;
}

/**
 * Whether any event of the partitions is pending for the consumer (one autocommit statement). On a run's own
 * connection (`release`) the same statement first releases the partitions it holds (its last batch has
 * committed).
 */
async function lookAt(
  run: SqlRun,
  consumer: OutboxConsumer,
  parts: number[],
  release: boolean,
): Promise<boolean> {
  const [row] = await run<{ pending: boolean }>(
    `select ${release ? 'pg_advisory_unlock_all(), ' : ''}exists (select 1 from outbox_pending
       where consumer = ${consumer.code} and part = any($1::int[]) and done_at is null) as pending`,
    [parts],
  );
  return row.pending;
}

/**
 * Where a take runs: `transaction`, in a transaction on the ORM's pool (a failed batch's fallback), which plans
 * afresh (CUSTOM_PLANS_SQL) and holds transaction locks; `statement`, a one-statement batch on consumerPool
 * (transaction locks, held until the statement commits); `session`, a held run on consumerPool (HeldBatch),
 * whose locks outlive the statement.
 */
type TakeMode = 'transaction' | 'statement' | 'session';

/**
 * The select of a take (a `part` column): $1 the first partition, $2 the partitions to skip, $3
 * the lock namespace; `batch` is the batch size. In `session` mode it first releases what the run held (its
 * previous batch has committed), then takes the rebuild lock shared and the partitions as session locks.
 */
const takePartitionsSql = (
  consumer: OutboxConsumer,
  rebuildShared: boolean,
  batch: number,
  mode: TakeMode = 'transaction',
): string =>
  // The same few texts every batch: built once, so that a batch neither rebuilds nor rehashes them.
  takeTexts(`${consumer.code} ${rebuildShared} ${batch} ${mode}`, () =>
    takeText(consumer, rebuildShared, batch, mode),
  );

const takeTexts = textCache();

/**
 * A walk over the partitions in order from $1, one step per partition (a recursive CTE evaluates its steps one
 * after the other, so it stops as soon as the batch is full and tries no lock beyond): a partition it skips,
 * finds nothing pending in (one index entry probed) or cannot lock counts 0; one it locks counts its pending
 * events, at most as many as the batch still lacks. CASE tries the lock only after the probe, and the count only
 * once locked; OFFSET 0 keeps each step's lock a subquery evaluated once.
 */
const takeText = (
  consumer: OutboxConsumer,
  rebuildShared: boolean,
  batch: number,
  mode: TakeMode,
): string => {
  const pending = (part: string) =>
    `outbox_pending o where o.consumer = ${consumer.code} and o.part = ${part} and o.done_at is null`;
  const lock = mode === 'session' ? 'pg_try_advisory_lock' : 'pg_try_advisory_xact_lock';
  return `with recursive ${mode === 'session' ? 'u as materialized (select pg_advisory_unlock_all()), ' : ''}r as materialized (
     select ${transactionSettings(consumer, rebuildShared, mode)}${mode === 'session' ? ' from u' : ''}),
   walk(g, part, filled) as (
     select 0, null::int, 0 from r
     union all
     select w.g + 1, case when l.locked then p.part end, w.filled + c.n
       from walk w
      cross join lateral (select (w.g + $1::int) % ${OUTBOX_PARTITIONS} as part) p
      cross join lateral (select case when p.part = any($2::int[]) then false
                                      when not exists (select 1 from ${pending('p.part')}) then false
                                      else ${lock}($3::int, p.part) end as locked
                            offset 0) l
      cross join lateral (select case when l.locked
                                      then (select count(*)::int from (select 1 from ${pending('p.part')}
                                                                         limit ${batch} - w.filled) k)
                                      else 0 end as n
                            offset 0) c
      where w.g < ${OUTBOX_PARTITIONS} and w.filled < ${batch})
   select part from walk where part is not null`;
};

/**
 * What a consumer transaction sets up before it reads anything, as one select list: the rebuild lock shared
 * when asked, custom plans on the ORM's pool (CUSTOM_PLANS_SQL; consumerPool's connections keep generic ones)
 * and the consumer's commit mode (`asyncCommit`; a HeldBatch sets it in its own applying statement, the one that
 * commits).
 */
const transactionSettings = (
  consumer: OutboxConsumer,
  rebuildShared: boolean,
  mode: TakeMode = 'transaction',
): string =>
  [
    rebuildShared ? (mode === 'session' ? REBUILD_LOCK_SHARED_SESSION : REBUILD_LOCK_SHARED) : '1',
    ...(mode === 'transaction' ? [CUSTOM_PLANS_SQL] : []),
    ...(consumer.asyncCommit && mode !== 'session' ? [ASYNC_COMMIT_SQL] : []),
  ].join(', ');

/** Gives back what a held run holds on its connection: its session advisory locks. */
const RELEASE_SQL = 'select pg_advisory_unlock_all()';

/** The fallback of a failed batch: each pending item of the partition in its own transactions. */
async function applyItemByItem(
  em: EntityManager,
  consumer: OutboxConsumer,
  apply: ConsumerBatch,
  part: number,
  batchSize: number,
  options: DrainOptions,
  result: DrainResult,
): Promise<void> {
  const items = await (
    await nativePool(em)
  ).query<{ item_id: string }>(
    `select distinct e.aggregate_id as item_id from outbox_pending x join outbox_event e on e.id = x.id
      where x.consumer = ${consumer.code} and x.part = $1 and x.done_at is null`,
    [part],
  );
  for (const { item_id: itemId } of items.rows) {
    try {
      for (;;) {
        const n = await nativeTransaction(em, async sql => {
          // On the ORM's pool, whose lock timeout is for the request path: this one waits as the batches do.
          await sql(`select ${NO_LOCK_TIMEOUT_SQL}`);
          await sql(`select ${transactionSettings(consumer, options.rebuildShared === true)}`);
          await sql('select pg_advisory_xact_lock($1::int, $2::int)', [consumer.lockNamespace, part]);
          return apply(sql, [part], batchSize, itemId);
        });
        result.applied += n;
        result.batches += 1;
        if (n < batchSize) break;
      }
    } catch (error) {
      result.failed += 1;
      options.onPoison?.(error, part, itemId);
    }
  }
}
