import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';

/** Runs one statement with native `$n` parameters and returns its rows. */
export type SqlRun = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

const pools = new WeakMap<object, Promise<pg.Pool>>();

/**
 * A cache of texts by key: `texts(key, build)` builds a key's text (`build(key)`) on first use and gives back the
 * same string afterwards. For statement texts (and their names) that would otherwise be rebuilt, and rehashed
 * as new strings, on every batch; each cache holds a few keys.
 */
export function textCache(): (key: string, build: (key: string) => string) => string {
  const texts = new Map<string, string>();
  return (key, build) => {
    let text = texts.get(key);
    if (text === undefined) texts.set(key, (text = build(key)));
    return text;
  };
}

const names = textCache();

/**
 * A statement's name for PostgreSQL's prepared-statement cache, derived from its text: each connection parses
 * and plans a consumer's statements once instead of every batch (the analytics fold's writes are long CTEs).
 */
export const statementName = (text: string): string => names(text, nameOf);

const nameOf = (text: string): string => `sr_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;

/** The pools of `pools` once they are there, for a caller that can go on without waiting a tick. */
const readyPools = new WeakMap<object, pg.Pool>();

/** The ORM's own `pg` pool (same connections, same type parsers). */
export function nativePool(em: EntityManager): Promise<pg.Pool> {
  const connection = em.getConnection();
  let pool = pools.get(connection);
  if (!pool) {
    pool = connection.getNativeClient();
    pools.set(connection, pool);
    pool.then(
      ready => readyPools.set(connection, ready),
      () => pools.delete(connection),
    );
  }
  return pool;
}

/** The ORM's own `pg` pool if `nativePool` has already opened it (a hot path's statement needs no await for it). */
export const readyPool = (em: EntityManager): pg.Pool | undefined => readyPools.get(em.getConnection());

/** One statement as a named prepared statement on a pool (its own implicit transaction) or one connection. */
export const preparedQuery = <R>(queryable: pg.Pool | pg.PoolClient, text: string, values: unknown[] = []) =>
  queryable.query({ name: statementName(text), text, values }).then(result => result.rows as R[]);

/** Statements as named prepared statements on a pool (each its own implicit transaction) or one connection. */
export const preparedRun =
  (queryable: pg.Pool | pg.PoolClient): SqlRun =>
  <R>(text: string, values: unknown[] = []) =>
    preparedQuery<R>(queryable, text, values);

/** Statements straight on the ORM's pool, each in its own (implicit) transaction. */
export async function poolRun(em: EntityManager): Promise<SqlRun> {
  return preparedRun(await nativePool(em));
}

/** The same without waiting a tick once the pool is open (the hot writes' path), else its promise. */
export function poolRunNow(em: EntityManager): SqlRun | Promise<SqlRun> {
  const pool = readyPool(em);
  return pool ? preparedRun(pool) : poolRun(em);
}

/**
 * A transaction straight on a connection of the ORM's pool, with bound parameters: for the outbox consumers,
 * which run a handful of set-based statements per batch many times a second and need none of the ORM's
 * client-side formatting, query logging or unit of work. Rolls back on any error; a connection that cannot
 * even roll back is discarded, never returned to the pool.
 */
export async function nativeTransaction<T>(
  em: EntityManager,
  work: (sql: SqlRun, client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await (await nativePool(em)).connect();
  let broken = false;
  try {
    await client.query('begin');
    const result = await work(preparedRun(client), client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
