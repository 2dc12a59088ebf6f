import { createHash } from 'node:crypto';
import { PagingError } from '../shared/errors.js';
import type { SortOrder } from '../shared/paging.js';

/**
 * What a cursor carries from a walk's first page: which read it belongs to (a digest of the route, filters,
 * sort and size), the number and frozen total of the page it opens, the last entry of the page before it, and
 * the first page's visibility: the highest entry id it saw and the transactions still in progress then.
 */
export interface HistoryCursor {
  read: string;
  number: number;
  total: number;
  after: string;
  maxId: string;
  inProgress: string[];
}

const DIGITS = /^\d{1,19}$/;

/** The digest a cursor names its read by: a cursor is only valid for the read that issued it. */
export const readDigest = (parts: unknown): string =>
  createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);

export const encodeCursor = (c: HistoryCursor): string =>
  Buffer.from(JSON.stringify([c.read, c.number, c.total, c.after, c.maxId, c.inProgress])).toString(
    'base64url',
  );

/** Parses a cursor of the read `read`: anything else (malformed, altered, of another read) -> 400. */
export function decodeCursor(token: string, read: string): HistoryCursor {
  const invalid = () => new PagingError('error.paging.cursor', {});
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(value) || value.length !== 6) throw invalid();
  const [digest, number, total, after, maxId, inProgress] = value as unknown[];
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  const id = (s: unknown) => typeof s === 'string' && DIGITS.test(s);
  if (
    digest !== read ||
    !count(number) ||
    !count(total) ||
    !id(after) ||
    !id(maxId) ||
    !Array.isArray(inProgress) ||
    inProgress.length > 10_000 ||
    !inProgress.every(id)
  )
    throw invalid();
  return {
    read,
    number: number as number,
    total: total as number,
    after: after as string,
    maxId: maxId as string,
    inProgress: inProgress as string[],
  };
}

/**
 * The rows after the cursor's last entry in the order `sort` then id ascending (keyset: the leading sort key
 * bounds an index range, the others break its ties), restricted to the entries its first page could see: ids
 * up to the highest it saw, none written by a transaction in progress then (the history is append-only and
 * ids are drawn after the writing transaction has its id, so a later entry has a higher id or such a writer).
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
  params.push(c.maxId, `{${c.inProgress.join(',')}}`);
  return {
    sql: `${bound} and (${alternatives.join(' or ')}) and h.id <= ?::bigint and h.xmin::text::bigint <> all(?::bigint[])`,
    params,
  };
}

/** The first page's visibility, read in its snapshot. */
export const VISIBILITY_SQL = `select coalesce((select max(id) from stock_history), 0)::text as "maxId",
  array(select (x::text::bigint % 4294967296)::text from pg_snapshot_xip(pg_current_snapshot()) x) as "inProgress"`;
