import type { EntityManager } from '@mikro-orm/postgresql';
import { containsPattern } from '../shared/sql.js';

/** The filters a history total can have (the history reads); ids already checked to be UUIDs. */
export interface CountFilters {
  startDate?: Date;
  endDate?: Date;
  itemName?: string;
  supplierId?: string;
  itemId?: string;
  reason?: string;
}

const DAY_MS = 86_400_000;
/** A bound past year 9999 (a month or day rounded up from the last dates a filter takes) is PostgreSQL's infinity. */
const beyondCalendar = (d: Date) => d.getUTCFullYear() > 9999;
const isoDay = (d: Date) => (beyondCalendar(d) ? 'infinity' : d.toISOString().slice(0, 10));
const isoInstant = (d: Date) => (beyondCalendar(d) ? 'infinity' : d.toISOString());
const floorDay = (d: Date) => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);
const ceilDay = (d: Date) => new Date(Math.ceil(d.getTime() / DAY_MS) * DAY_MS);
const floorMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
const ceilMonth = (d: Date) => {
  const m = floorMonth(d);
  return m.getTime() === d.getTime() ? m : new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
};

interface Piece {
  sql: string;
  params: unknown[];
}

/**
 * The exact number of history entries matching `f`, in the caller's snapshot, without counting the history:
 * whole months (and, without an item filter, whole UTC days) come from the count tables the history's insert
 * trigger keeps, and only the ragged ends of a date range (at most a day without an item filter, a month of
 * the filtered items with one) are counted from the history's indexes.
 */
export async function countHistory(em: EntityManager, f: CountFilters): Promise<number> {
  const byItem = f.itemId !== undefined || f.itemName;
  // No read filters items by reason: such a total is counted from the history.
  const pieces =
    byItem && f.reason ? [raw(f, f.startDate, f.endDate, true)] : byItem ? itemPieces(f) : globalPieces(f);
  const sql = `select (${pieces.map(p => `(${p.sql})`).join(' + ')})::bigint as n`;
  const [row] = await em.execute<{ n: string }[]>(
    sql,
    pieces.flatMap(p => p.params),
  );
  return Number(row.n);
}

/** A list of SQL conditions and their parameters, in order. */
function conditions() {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    params.push(...values);
  };
  return { where, params, add };
}

/** Conditions on the history itself for the non-date filters. */
function rawConditions(f: CountFilters): Piece {
  const { where, params, add } = conditions();
  if (f.supplierId) add('h.supplier_id = ?', f.supplierId);
  if (f.reason) add('h.reason = ?', f.reason);
  if (f.itemId !== undefined) add('h.item_id = ?', f.itemId);
  if (f.itemName) {
    const pattern = containsPattern(f.itemName);
    add(
      'h.item_id in (select n.item_id from history_item_name n where n.item_name ilike ?) and h.item_name ilike ?',
      pattern,
      pattern,
    );
  }
  return { sql: where.join(' and '), params };
}

/** Entries of the history in [from, to) (or [from, to] when `toInclusive`), counted from its indexes. */
function raw(f: CountFilters, from: Date | undefined, to: Date | undefined, toInclusive: boolean): Piece {
  const base = rawConditions(f);
  const { where, params, add } = conditions();
  if (base.sql) add(base.sql, ...base.params);
  if (from) add('h."timestamp" >= ?', isoInstant(from));
  if (to) add(`h."timestamp" ${toInclusive ? '<=' : '<'} ?`, isoInstant(to));
  return {
    sql: `select count(*) from stock_history h${where.length ? ` where ${where.join(' and ')}` : ''}`,
    params,
  };
}

/** Sum of a count table's rows whose `column` lies in [from, to) (either end open when undefined). */
function rolled(table: string, column: string, f: CountFilters, from?: Date, to?: Date): Piece {
  const { where, params, add } = conditions();
  if (f.supplierId) add('c.supplier_key = ?', f.supplierId);
  if (f.reason) add('c.reason = ?', f.reason);
  if (f.itemId !== undefined) add('c.item_id = ?', f.itemId);
  if (f.itemName) {
    add(
      '(c.item_id, c.item_name) in (select n.item_id, n.item_name from history_item_name n where n.item_name ilike ?)',
      containsPattern(f.itemName),
    );
  }
  if (from) add(`c.${column} >= ?::date`, isoDay(from));
  if (to) add(`c.${column} < ?::date`, isoDay(to));
  return {
    sql: `select coalesce(sum(c.entries), 0) from ${table} c${where.length ? ` where ${where.join(' and ')}` : ''}`,
    params,
  };
}

/** With an item filter: whole months from history_count_item, the months' ragged ends from the history. */
function itemPieces(f: CountFilters): Piece[] {
  const { startDate: s, endDate: e } = f;
  const lo = s && ceilMonth(s);
  const hi = e && floorMonth(e);
  if (lo && hi && lo >= hi) return [raw(f, s, e, true)];
  const pieces = [rolled('history_count_item', 'month', f, lo, hi)];
  if (s && lo && s < lo) pieces.push(raw(f, s, lo, false));
  if (e && hi) pieces.push(raw(f, hi, e, true));
  return pieces;
}

/** Without one: whole months, then whole days, from the global tables; the range's ragged days from the history. */
function globalPieces(f: CountFilters): Piece[] {
  const { startDate: s, endDate: e } = f;
  const dLo = s && ceilDay(s);
  const dHi = e && floorDay(e);
  if (dLo && dHi && dLo >= dHi) return [raw(f, s, e, true)];
  const pieces: Piece[] = [];
  if (s && dLo && s < dLo) pieces.push(raw(f, s, dLo, false));
  if (e && dHi) pieces.push(raw(f, dHi, e, true));
  const mLo = dLo && ceilMonth(dLo);
  const mHi = dHi && floorMonth(dHi);
  if (mLo && mHi && mLo >= mHi) {
    pieces.push(rolled('history_count_day', 'day', f, dLo, dHi));
    return pieces;
  }
  pieces.push(rolled('history_count_month', 'month', f, mLo, mHi));
  if (dLo && mLo && dLo < mLo) pieces.push(rolled('history_count_day', 'day', f, dLo, mLo));
  if (dHi && mHi && mHi < dHi) pieces.push(rolled('history_count_day', 'day', f, mHi, dHi));
  return pieces;
}

/** Offsets below this are read past directly: cheaper than finding their day. */
const JUMP_FROM = 1000;
const HOUR_MS = 3_600_000;

/** Count rows of one bucket (an ISO instant, UTC) and its entries, newest first. */
type Buckets = { at: string; n: string }[];

/**
 * Where a page `offset` entries deep into a newest-first read without item or date filters starts: before the
 * instant `before` (ISO) and `skip` entries past it, found from the count rows (which month, then which day of
 * it, then, without a supplier or reason filter, which hour of that day holds the offset), so a deep page never
 * reads the entries it skips beyond one hour (one day of the supplier or reason). Undefined when the offset is
 * small (read past it); `before` undefined and `skip` = offset when it is past the end.
 */
export async function newestFirstStart(
  em: EntityManager,
  f: Pick<CountFilters, 'supplierId' | 'reason'>,
  offset: number,
): Promise<{ before?: string; skip: number } | undefined> {
  if (offset < JUMP_FROM) return undefined;
  const counts = async (table: string, column: string, within?: Date, span = "interval '1 month'") => {
    const { where, params, add } = conditions();
    if (f.supplierId) add('c.supplier_key = ?', f.supplierId);
    if (f.reason) add('c.reason = ?', f.reason);
    if (within)
      add(`c.${column} >= ?::timestamp and c.${column} < ?::timestamp + ${span}`, at(within), at(within));
    return em.execute<Buckets>(
      `select to_char(c.${column}, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at, sum(c.entries) as n from ${table} c
       ${where.length ? `where ${where.join(' and ')}` : ''} group by c.${column} order by c.${column} desc`,
      params,
    );
  };
  // Finds the bucket holding entry number `offset` (0-based) counted from the newest; the entries newer than it.
  const locate = (rows: Buckets, from: number) => {
    let newer = from;
    for (const row of rows) {
      if (newer + Number(row.n) > offset) return { at: new Date(row.at), newer };
      newer += Number(row.n);
    }
    return undefined;
  };
  const month = locate(await counts('history_count_month', 'month'), 0);
  if (!month) return { skip: offset };
  const day = locate(await counts('history_count_day', 'day', month.at), month.newer);
  if (!day) return { skip: offset };
  if (f.supplierId || f.reason) return start(day.at, DAY_MS, day.newer);
  const hour = locate(await counts('history_count_hour', 'hour', day.at, "interval '1 day'"), day.newer);
  return hour ? start(hour.at, HOUR_MS, hour.newer) : start(day.at, DAY_MS, day.newer);

  function start(bucket: Date, length: number, newer: number) {
    return { before: new Date(bucket.getTime() + length).toISOString(), skip: offset - newer };
  }
}

/** An instant as a UTC timestamp literal (the count tables' buckets are UTC timestamps and dates). */
const at = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
