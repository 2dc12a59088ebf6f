import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { PagingError } from '../shared/errors.js';
import type { SortOrder } from '../shared/paging.js';

/**
 * What a cursor carries from a walk's first page: which read it belongs to (a digest of the route, filters,
 * sort and size), the number and frozen total of the page it opens, the last entry of the page before it, the
 * first page's snapshot (which entries the walk may return) and the WAL position below which everything that
 * snapshot saw lies (where a replica may serve the walk).
 */
export interface HistoryCursor {
  read: string;
  number: number;
  total: number;
  after: string;
  snapshot: Snapshot;
  lsn: number;
}

/** A pg_snapshot: transactions below `xmin` and those of [xmin, xmax) not in `xip` are visible. */
export interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  xip: bigint[];
}

const DIGITS = /^\d{1,19}$/;
const XID8_MAX = 2n ** 64n - 1n;
/** More in-progress transactions than PostgreSQL can have (2 x MAX_BACKENDS bounds them far lower in practice). */
const MAX_IN_PROGRESS = 10_000;

/** The digest a cursor names its read by: a cursor is only valid for the read that issued it. */
export const readDigest = (parts: unknown): string =>
  createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);

/** `xmin:xmax:xip,...` (pg_snapshot's text form) as a Snapshot. */
export function parseSnapshot(text: string): Snapshot {
  const [xmin, xmax, xip] = text.split(':');
  return { xmin: BigInt(xmin), xmax: BigInt(xmax), xip: xip ? xip.split(',').map(BigInt) : [] };
}

export const snapshotText = (s: Snapshot): string => `${s.xmin}:${s.xmax}:${s.xip.join(',')}`;

/**
 * A snapshot kept small: xmin, then xmax and each in-progress id as its distance from the one before (ids are
 * 64-bit and close together, so a cursor stays well within the request-line limit of the HTTP server).
 */
function packSnapshot(s: Snapshot): (string | number)[] {
  const ids = [...s.xip].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const deltas: number[] = [];
  let previous = s.xmin;
  for (const id of ids) {
    deltas.push(Number(id - previous));
    previous = id;
  }
  return [String(s.xmin), Number(s.xmax - s.xmin), ...deltas];
}

/** The inverse of packSnapshot; undefined unless it is one (ids within 64 bits, in order, below xmax). */
function unpackSnapshot(value: unknown): Snapshot | undefined {
  if (!Array.isArray(value) || value.length < 2 || value.length > MAX_IN_PROGRESS + 2) return undefined;
  const [xmin, span, ...deltas] = value as unknown[];
  if (typeof xmin !== 'string' || !/^\d{1,20}$/.test(xmin) || !count(span) || !deltas.every(count))
    return undefined;
  const low = BigInt(xmin);
  const xmax = low + BigInt(span as number);
  if (xmax > XID8_MAX) return undefined;
  const xip: bigint[] = [];
  let previous = low;
  for (const delta of deltas as number[]) {
    previous += BigInt(delta);
    if (previous >= xmax || (xip.length > 0 && delta === 0)) return undefined;
    xip.push(previous);
  }
  return { xmin: low, xmax, xip };
}

const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

/**
 * The key cursors are signed with: an HMAC of a fixed label under SESSION_SECRET, so it needs no setting of its
 * own, every web process of a deployment shares it, and it is not the key of the session cookies.
 */
export const cursorKey = (sessionSecret: string): Buffer =>
  createHmac('sha256', sessionSecret).update('stockroom history cursor v1').digest();

const signature = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();

/** `<body>.<signature>`: the body base64url JSON, the signature its HMAC-SHA256 (base64url). */
export function encodeCursor(c: HistoryCursor, key: Buffer): string {
  const body = Buffer.from(
    JSON.stringify([c.read, c.number, c.total, c.after, packSnapshot(c.snapshot), c.lsn]),
  ).toString('base64url');
  return `${body}.${signature(key, body).toString('base64url')}`;
}

/**
 * A cursor's fields, whatever read it names; undefined when it is not a cursor this deployment signed (an
 * edited total, page number, position or snapshot does not verify).
 */
function parseCursor(token: string, key: Buffer): HistoryCursor | undefined {
  const [body, signed, ...rest] = token.split('.');
  if (signed === undefined || rest.length > 0) return undefined;
  const given = Buffer.from(signed, 'base64url');
  const expected = signature(key, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 6) return undefined;
  const [read, number, total, after, packed, lsn] = value as unknown[];
  const snapshot = unpackSnapshot(packed);
  if (
    typeof read !== 'string' ||
    !count(number) ||
    !count(total) ||
    typeof after !== 'string' ||
    !DIGITS.test(after) ||
    !snapshot ||
    !count(lsn)
  )
    return undefined;
  return {
    read,
    number: number as number,
    total: total as number,
    after,
    snapshot,
    lsn: lsn as number,
  };
}

/** Parses a cursor of the read `read`: anything else (malformed, altered, of another read) -> 400. */
export function decodeCursor(token: string, read: string, key: Buffer): HistoryCursor {
  const cursor = parseCursor(token, key);
  if (cursor?.read !== read) throw new PagingError('error.paging.cursor', {});
  return cursor;
}

/**
 * The WAL position a server must have replayed to continue the walk of `token` (its first page's snapshot saw
 * nothing above it); undefined when it is not a cursor (the read answers 400 wherever it runs).
 */
export const cursorPosition = (token: string, key: Buffer): number | undefined =>
  parseCursor(token, key)?.lsn;

/**
 * The rows after the cursor's last entry in the order `sort` then id ascending (keyset: the leading sort key
 * bounds an index range, the others break its ties), restricted to the entries its first page's snapshot saw: those whose writer (`writer_xact`, null
 * for entries older than the column) is visible in it. Id order says nothing here: a reversal's entry has the
 * id its request reserved but is written later by the consumer, so an entry with a lower id than the first
 * page's newest can appear after it.
 */
export function afterCursorSql(
  c: HistoryCursor,
  sort: SortOrder[],
  sortable: Record<string, string>,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const keys = [
    ...sort.map(o => ({ expr: sortable[o.property], desc: o.direction === 'DESC' })),
    {
      expr: 'h.id',
      desc: false,
    },
  ];
  const last = (expr: string) => {
    params.push(c.after);
    return `(select ${expr.replace(/\bh\./g, 'l.')} from stock_history l where l.id = ?::bigint)`;
  };
  const lead = keys[0];
  const bound = `${lead.expr} ${lead.desc ? '<=' : '>='} ${last(lead.expr)}`;
  const alternatives = keys.map((k, i) => {
    const equal = keys.slice(0, i).map(p => `${p.expr} = ${last(p.expr)}`);
    return `(${[...equal, `${k.expr} ${k.desc ? '<' : '>'} ${last(k.expr)}`].join(' and ')})`;
  });
  params.push(snapshotText(c.snapshot));
  return {
    sql: `${bound} and (${alternatives.join(' or ')}) and (h.writer_xact is null or pg_visible_in_snapshot(h.writer_xact, ?::pg_snapshot))`,
    params,
  };
}

/**
 * The first page's visibility, read in its snapshot: the snapshot itself and the primary's WAL insert position
 * (every commit that snapshot saw lies below it). On the primary only: a hot standby's pg_current_snapshot()
 * lists no transaction in progress (PostgreSQL keeps them apart there), so first pages are not read on replicas.
 */
export const VISIBILITY_SQL = `select pg_current_snapshot()::text as snapshot,
  (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::text as lsn`;
