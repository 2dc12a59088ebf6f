import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';

/** Runs one statement with native `$n` parameters and returns its rows. */
export type SqlRun = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

const pools = new WeakMap<object, Promise<pg.Pool>>();

/** The ORM's own `pg` pool (same connections, same type parsers). */
export function nativePool(em: EntityManager): Promise<pg.Pool> {
  const connection = em.getConnection();
  let pool = pools.get(connection);
  if (!pool) {
    pool = connection.getNativeClient();
    pools.set(connection, pool);
    pool.catch(() => pools.delete(connection));
  }
  return pool;
}

/**
 * A transaction straight on a connection of the ORM's pool, with bound parameters: for the outbox consumers,
 * which run a handful of set-based statements per batch many times a second and need none of the ORM's
 * client-side formatting, query logging or unit of work. Rolls back on any error; a connection that cannot
 * even roll back is discarded, never returned to the pool.
 */
export async function nativeTransaction<T>(em: EntityManager, work: (sql: SqlRun) => Promise<T>): Promise<T> {
  const client = await (await nativePool(em)).connect();
  let broken = false;
  try {
    await client.query('begin');
    const result = await work(
      async <R>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as R[],
    );
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
