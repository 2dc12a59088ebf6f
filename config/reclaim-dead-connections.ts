import type { Pool, PoolClient } from 'pg';

/** How long the holder of a connection that died gets to release it before the pool takes it back. */
const GRACE_MS = 1000;

/**
 * Kysely (under MikroORM) hands a transaction's connection back to the pool only after a successful COMMIT
 * or ROLLBACK. When the server goes away mid-transaction (crash, restart, network cut) both fail, and the
 * connection stays checked out for ever: every PostgreSQL crash cost the pool the connections of the
 * transactions in flight (3-4 of 10 in the R9 test) until the pool was empty and the app never recovered.
 * This gives such a connection back, marked broken (the pool discards it and opens a new one on demand),
 * once its holder has had a moment to do so itself; a holder that releases in time is left alone.
 *
 * Whether the holder did is the pool's own knowledge: each checkout gets its own `release`, which throws when
 * called a second time. A released dead connection never goes back to the idle list (the pool discards a
 * connection that is no longer queryable), so that `release` is still the last holder's. Nothing runs per
 * query: listeners on the pool's acquire and release events were a measurable cost of every statement.
 */
export function reclaimDeadConnections(pool: Pool, graceMs = GRACE_MS): void {
  pool.on('connect', (client: PoolClient) => {
    client.on('error', error => {
      setTimeout(() => {
        // Never checked out: no `release` (the pool's idle listener removes it).
        if (typeof (client as Partial<PoolClient>).release !== 'function') return;
        try {
          client.release(error);
        } catch {
          // released already, by its holder or by the pool (idle when it died)
        }
      }, graceMs).unref();
    });
  });
}
