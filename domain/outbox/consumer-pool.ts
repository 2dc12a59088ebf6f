import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { nativePool } from '../shared/native-transaction.js';
import { CONNECTION_LIFETIME_SECONDS, staggerConnectionLifetimes } from '../shared/connection-lifetimes.js';

const pools = new WeakMap<object, Promise<pg.Pool>>();
const sizes = new WeakMap<object, number>();

/**
 * How the consumers' connections plan, set when each connection opens: every prepared statement keeps ONE
 * generic plan, made with sequential scans disabled, so it reaches the outbox and the rollup tables through
 * their indexes whatever the statistics said when it was made (the consumers' statements look rows up by key,
 * per partition or per batch row, never in bulk: see byKey). A plan made while a table was small would
 * otherwise read all of it once it has grown (the marker update, planned on an almost empty outbox, read the
 * whole outbox for every batch), so a connection lives about a minute, as on the ORM's pool, and its plans are
 * remade from the tables' sizes of now.
 *
 * Custom plans for every small batch made planning a large share of the consumers' PostgreSQL time
 * (docs/performance.md); one generic plan per statement and connection removes it.
 */
const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan -c enable_seqscan=off';

/**
 * Statements of the consumers' runs at once per process (a run per consumer) and a look or two besides, unless
 * the process's connection split (config/connection-budget.ts) sized it: sizeConsumerPool.
 */
const CONSUMER_CONNECTIONS = 8;

/** The consumers' pool of the ORM connection `em` uses holds at most `max` connections (before its first use). */
export function sizeConsumerPool(em: EntityManager, max: number): void {
  sizes.set(em.getConnection(), max);
}

/**
 * The pool of the outbox consumers' batches: the ORM's connection settings and type parsers (the same rows as
 * on its pool), with GENERIC_PLANS on every connection. Nothing but the consumers' batch statements runs on it
 * (a failed batch's fallback, one item at a time, runs on the ORM's pool with custom plans).
 */
export function consumerPool(em: EntityManager): Promise<pg.Pool> {
  const connection = em.getConnection();
  let pool = pools.get(connection);
  if (!pool) {
    pool = nativePool(em).then(orm => {
      const consumers = new pg.Pool({
        ...orm.options,
        // The spread read the ORM pool's staggered lifetime once: its base again, staggered below.
        maxLifetimeSeconds: CONNECTION_LIFETIME_SECONDS,
        min: 0,
        max: sizes.get(connection) ?? CONSUMER_CONNECTIONS,
        options: GENERIC_PLANS,
        // A consumer's batches wait for their partitions and the rebuild lock as long as it takes.
        lock_timeout: 0,
        application_name: 'stockroom-consumer',
        allowExitOnIdle: true,
      });
      // A connection dropped by the server must not take the process down: the pool discards an idle one, and
      // a run's own query fails, so the run releases it as broken (drainConsumer).
      consumers.on('error', () => undefined);
      staggerConnectionLifetimes(consumers);
      consumers.on('connect', client => client.on('error', () => undefined));
      return consumers;
    });
    pools.set(connection, pool);
    pool.catch(() => pools.delete(connection));
  }
  return pool;
}

/** Closes the consumers' pool of the ORM connection `em` uses, if it has one (before the ORM closes). */
export async function closeConsumerPool(em: EntityManager): Promise<void> {
  const connection = em.getConnection();
  const pool = pools.get(connection);
  pools.delete(connection);
  await (await pool?.catch(() => undefined))?.end();
}
