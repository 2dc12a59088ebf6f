import type { EntityManager } from '@mikro-orm/postgresql';
import { OUTBOX_CONSUMERS } from './consumers.js';
import { pendingForSql } from './pending-events.js';
import { poolRun } from '../shared/native-transaction.js';

/**
 * Outbox events every consumer is done with are kept this long, then removed by the daily cleanup with their
 * progress rows. The outbox carries changes to the consumers; what they made of them (stock history, alerts,
 * rollups) is the record, and the rebuild reads only events still pending for the stock history.
 */
export const OUTBOX_RETENTION_DAYS = 7;

/** Event ids per purge statement (its own transaction): a long backlog is removed in short steps. */
const PURGE_CHUNK = 5000;

/**
 * One step of the purge: of the events with ids in [$1, $2), those created before $3 and no longer pending for
 * any consumer are deleted with their progress rows (found by id range through outbox_pending's BRIN index);
 * answers how many. An event still pending is never deleted, however old. Each step reads its id range through
 * the primary key and probes the pending index for its old events only.
 */
const PURGE_STEP = `
  with chunk as materialized (
    select e.id, e.part, e.created_at < $3 as old from outbox_event e where e.id >= $1 and e.id < $2
  ), gone as materialized (
    select c.id from chunk c where c.old and not ${pendingForSql(OUTBOX_CONSUMERS, 'c')}
  ), progress as (
    delete from outbox_pending p where p.id >= $1 and p.id < $2 and p.id in (select id from gone)
  ), events as (
    delete from outbox_event e where e.id in (select id from gone) returning 1
  )
  select count(*)::int as deleted from events`;

/**
 * Housekeeping: deletes the events older than `retentionDays` that every consumer is done with; answers how
 * many. It walks every id range up to the newest event: ids follow creation time only roughly (a transaction's
 * `now()` is its start), so a recent event does not mean that none after it is old.
 */
export async function purgeOutbox(em: EntityManager, retentionDays = OUTBOX_RETENTION_DAYS): Promise<number> {
  const run = await poolRun(em);
  const [bounds] = await run<{ first: string | null; last: string | null; cutoff: Date }>(
    `select min(id)::text as first, max(id)::text as last, now() - make_interval(days => $1) as cutoff
       from outbox_event`,
    [retentionDays],
  );
  if (bounds.first === null || bounds.last === null) return 0;
  let deleted = 0;
  for (let from = BigInt(bounds.first); from <= BigInt(bounds.last); from += BigInt(PURGE_CHUNK)) {
    const [step] = await run<{ deleted: number }>(PURGE_STEP, [
      from.toString(),
      (from + BigInt(PURGE_CHUNK)).toString(),
      bounds.cutoff,
    ]);
    deleted += step.deleted;
  }
  return deleted;
}
