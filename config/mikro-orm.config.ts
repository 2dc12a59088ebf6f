import { fileURLToPath } from 'node:url';
import type { Pool } from 'pg';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { ENTITIES } from '../domain/entities.js';
import { reclaimDeadConnections } from './reclaim-dead-connections.js';
import { postgresConnection } from './postgres-tls.js';
import {
  CONNECTION_LIFETIME_SECONDS,
  staggerConnectionLifetimes,
} from '../domain/shared/connection-lifetimes.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../domain/migrations', import.meta.url));

/**
 * MikroORM options for a database URL. Migrations are hand-written SQL (checks, triggers, functional indexes);
 * the migrator extension is loaded only by what migrates (config/database.ts `migrate`), not by every process.
 */
/**
 * Stands in for `@mikro-orm/migrations` in the configuration: MikroORM.init() otherwise imports every installed
 * extension (the migrator alone is megabytes of heap) into every process. `migrate()` registers the real one.
 */
class Migrator {
  static register(): void {}
}

export function ormOptions(
  databaseUrl: string,
  poolMax = 10,
  options: { lockTimeoutMs?: number; caPem?: string } = {},
): Options {
  const { connectionString, ssl } = postgresConnection(databaseUrl, options.caPem);
  return defineConfig({
    clientUrl: connectionString,
    entities: [...ENTITIES],
    extensions: [Migrator],
    migrations: {
      path: MIGRATIONS_DIR,
      pathTs: MIGRATIONS_DIR,
      glob: '!(*.d).{js,ts}',
      snapshot: false,
      silent: true,
      transactional: true,
      allOrNothing: true,
    },
    // No idle timeout: pg-pool arms (and at once clears) a timer on every release for it, a measurable cost of
    // every query under load. An idle connection still closes at the end of its lifetime (below).
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 0 },
    // pg Pool options: bounded wait for a connection (also while the pool is exhausted; R9/R14 allow <= 5 s)
    // and per statement.
    // A connection that dies under a transaction is given back to the pool (see reclaim-dead-connections.ts).
    driverOptions: {
      connectionTimeoutMillis: 5000,
      // A connection lives about a minute (45-75 s, staggered: staggerConnectionLifetimes), so the generic plans
      // PostgreSQL keeps on it (and on the outbox consumers' pool, which copies these options: consumerPool) are
      // remade from the tables' sizes of now.
      maxLifetimeSeconds: CONNECTION_LIFETIME_SECONDS,
      statement_timeout: 30000,
      // A write waits this long at most for a row lock (503 with Retry-After then), so writes queued behind a
      // lock give their connections back instead of holding the pool until the statement timeout. Work that
      // must wait longer (a rollup rebuild, a consumer's partition lock) lifts it for its own transaction.
      ...(options.lockTimeoutMs ? { lock_timeout: options.lockTimeoutMs } : {}),
      application_name: 'stockroom',
      ssl,
      onPoolCreated: (pool: Pool) => {
        reclaimDeadConnections(pool);
        staggerConnectionLifetimes(pool);
      },
    },
    allowGlobalContext: false,
    debug: false,
    ensureDatabase: false,
  });
}
