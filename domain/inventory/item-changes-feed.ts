import { GoneError, ValidationError } from '../shared/errors.js';
import { isoSql } from '../shared/sql.js';
import { dbQuery, type Db } from '../shared/pool-query.js';

/** How long a change-feed cursor stays valid (contract: at least 30 days, independent of the outbox's 7). */
export const CHANGE_FEED_RETENTION_DAYS = 30;

export interface ItemChangeView {
  itemId: string;
  kind: 'created' | 'updated' | 'deleted';
  version: number;
  at: string;
}

export interface ItemChangesPage {
  changes: ItemChangeView[];
  next: string;
}

/** A position in the feed: the (transaction id, change id) of the last change handed out, and when it was issued. */
interface Position {
  xid: string;
  id: string;
  issuedAt: number;
}

const CURSOR = /^(\d{1,20})\.(\d{1,20})\.(\d{1,15})$/;

export const encodeChangeCursor = (position: Position): string =>
  Buffer.from(`${position.xid}.${position.id}.${position.issuedAt}`).toString('base64url');

const XID8_MAX = 2n ** 64n - 1n;
const BIGINT_MAX = 2n ** 63n - 1n;
/** How far ahead of this process's clock a cursor's issue time may be (the clocks of the web processes differ). */
const CLOCK_SKEW_MS = 60_000;

const invalidCursor = () => new ValidationError('inventory.changes.cursor.invalid');

/**
 * A cursor's position; 400 unless it is one this API could have issued: a transaction id within 64 bits, a
 * change id within a bigint, issued no later than now (a position beyond every transaction would park the client
 * forever, waiting for changes that never sort after it).
 */
function decodeChangeCursor(cursor: string, now: number): Position {
  const match = /^[A-Za-z0-9_-]{1,100}$/.test(cursor)
    ? CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
    : null;
  if (!match || BigInt(match[1]) > XID8_MAX || BigInt(match[2]) > BIGINT_MAX) throw invalidCursor();
  const issuedAt = Number(match[3]);
  if (issuedAt > now + CLOCK_SKEW_MS) throw invalidCursor();
  return { xid: match[1], id: match[2], issuedAt };
}

/** Whether a position's transaction id has been handed out yet (below the next one PostgreSQL will assign). */
const ISSUED_XID_SQL = 'select ?::xid8 < pg_snapshot_xmax(pg_current_snapshot()) as issued';

/**
 * Changes after the position in (place, change id) order, only below the oldest transaction still running that
 * could write one (the statement's own snapshot): every transaction that could still write a row before the
 * position has ended, so a row never appears behind a cursor that has passed it. A sequence value alone would
 * not do: ids are taken before their transactions commit, in another order. This is pg_snapshot_xmin, except
 * that running transactions seen in pg_stat_activity as another database's are left out (transaction ids are
 * shared by the whole cluster, item_change is this database's): one can never write here, and a long one there
 * would hold the feed back. A transaction not seen at all counts, so a race can only hold the feed back a poll.
 */
const CHANGES_SQL = `
with bound as materialized (
  select coalesce((select min(x) from pg_snapshot_xip(s.snap) x
                    where not exists (select 1 from pg_stat_activity a
                                       where a.backend_xid = x::xid and a.datname <> current_database())),
                  pg_snapshot_xmax(s.snap)) as below
    from (select pg_current_snapshot() as snap) s
)
select c.item_id as "itemId", c.kind, c.version, ${isoSql('c.at')} as at, c.xid::text as xid, c.id::text as id
  from item_change c, bound
 where (c.xid, c.id) > (?::xid8, ?::bigint) and c.xid < bound.below
 order by c.xid, c.id
 limit ?`;

/**
 * Incremental sync: the item changes (created, updated, deleted) after `since` in commit order, at most `limit`,
 * and the cursor to ask with next time (the same position when nothing new is handed out yet, issued anew).
 * Without `since`, from the oldest change kept. 400 for a malformed cursor, 410 for one older than the retention.
 */
export async function readItemChanges(
  db: Db,
  input: { since?: string; limit: number },
  now = Date.now(),
): Promise<ItemChangesPage> {
  const from: Position =
    input.since === undefined ? { xid: '0', id: '0', issuedAt: now } : decodeChangeCursor(input.since, now);
  if (from.issuedAt < now - CHANGE_FEED_RETENTION_DAYS * 86_400_000)
    throw new GoneError('inventory.changes.cursor.expired', { params: { days: CHANGE_FEED_RETENTION_DAYS } });
  if (input.since !== undefined) {
    const [{ issued }] = await dbQuery<{ issued: boolean }>(db, ISSUED_XID_SQL, [from.xid]);
    if (!issued) throw invalidCursor();
  }
  const rows = await dbQuery<ItemChangeView & { xid: string; id: string }>(db, CHANGES_SQL, [
    from.xid,
    from.id,
    input.limit,
  ]);
  const last = rows.at(-1);
  return {
    changes: rows.map(r => ({ itemId: r.itemId, kind: r.kind, version: Number(r.version), at: r.at })),
    next: encodeChangeCursor({ xid: last?.xid ?? from.xid, id: last?.id ?? from.id, issuedAt: now }),
  };
}
