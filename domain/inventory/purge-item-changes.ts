import type { EntityManager } from '@mikro-orm/postgresql';
import { poolRun } from '../shared/native-transaction.js';

/**
 * Item-change records (what `asOf` and the change feed read) are kept this long. Past it, an item keeps only its
 * newest record from before the cutoff: the state it had at the cutoff, which every point-in-time read after
 * the cutoff starts from. An item deleted before the cutoff goes entirely.
 */
export const ITEM_CHANGE_RETENTION_DAYS = 30;

/** Records per purge statement (its own transaction), oldest first: a long history goes in short steps. */
const PURGE_CHUNK = 5000;

/**
 * One step: up to PURGE_CHUNK records older than $1 that a point-in-time read at or after $1 cannot need (a
 * newer record of the same item is also older than $1, or the record is the item's deletion). Through the
 * (item, at) index, oldest first.
 */
const PURGE_STEP = `
  with doomed as (
    select c.xid, c.id from item_change c
     where c.at < $1
       and (c.kind = 'deleted'
            or exists (select 1 from item_change n
                        where n.item_id = c.item_id and n.at < $1 and (n.at, n.id) > (c.at, c.id)))
     order by c.at
     limit ${PURGE_CHUNK}
  ), gone as (
    delete from item_change c using doomed d where c.xid = d.xid and c.id = d.id returning 1
  )
  select count(*)::int as deleted from gone`;

/** Housekeeping: deletes the item-change records past the retention that no read can need; answers how many. */
export async function purgeItemChanges(
  em: EntityManager,
  retentionDays = ITEM_CHANGE_RETENTION_DAYS,
): Promise<number> {
  const run = await poolRun(em);
  const [{ cutoff }] = await run<{ cutoff: Date }>('select now() - make_interval(days => $1) as cutoff', [
    retentionDays,
  ]);
  let deleted = 0;
  for (;;) {
    const [step] = await run<{ deleted: number }>(PURGE_STEP, [cutoff]);
    deleted += step.deleted;
    if (step.deleted < PURGE_CHUNK) return deleted;
  }
}
