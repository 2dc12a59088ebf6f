import type { EntityManager } from '@mikro-orm/postgresql';
import { poolRun, preparedQuery, readyPool, type SqlRun } from './native-transaction.js';

const numbered = new Map<string, string>();

/** `?` placeholders as `$1, $2, ...` (the statements passed here hold no other `?`), memoized per statement. */
export function withNumberedParams(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, text);
  }
  return text;
}

/**
 * One statement of a hot request path, straight on the ORM's own `pg` pool (same connections, same type
 * parsers) with bound parameters, as a prepared statement: none of the ORM's client-side formatting and query
 * logging. Inside a transaction the statement must run on the transaction's connection, so it goes through the
 * EntityManager.
 * Errors are the driver's (translateDbError maps both kinds).
 */
export function poolQuery<T>(em: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  if (em.isInTransaction()) return em.execute<T[]>(sql, params);
  // A named statement: each connection parses and plans it once (less PostgreSQL CPU per request).
  const text = withNumberedParams(sql);
  const pool = readyPool(em);
  // Once the pool is open: straight to it, one promise (no async frames and no await of the open pool).
  if (pool) return preparedQuery<T>(pool, text, params);
  return poolRun(em).then(run => run<T>(text, params));
}

/**
 * Where a statement of a use case that runs either way goes: an EntityManager (poolQuery: its transaction, or
 * the pool), or a native run (a transaction's connection, or the pool) whose statements are prepared.
 */
export type Db = EntityManager | SqlRun;

/** One statement with `?` placeholders on `db` (see Db). */
export async function dbQuery<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  return typeof db === 'function' ? db<T>(withNumberedParams(sql), params) : poolQuery<T>(db, sql, params);
}
