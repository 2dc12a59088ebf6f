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
 */
export function reclaimDeadConnections(pool: Pool, graceMs = GRACE_MS): void {
  const checkedOut = new Set<PoolClient>();
  pool.on('acquire', client => checkedOut.add(client));
  pool.on('release', (_error, client) => checkedOut.delete(client));
  pool.on('remove', client => checkedOut.delete(client));
  pool.on('connect', client => {
    client.on('error', error => {
      if (!checkedOut.has(client)) return;
      setTimeout(() => {
        if (checkedOut.has(client)) client.release(error);
      }, graceMs).unref();
    });
  });
}
