import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions } from './mikro-orm.config.js';
import { settleSslmode } from './postgres-tls.js';

/**
 * Opens the ORM. MikroORM 7 connects lazily, so a database that is down fails requests (503), not start-up.
 * `lockTimeoutMs`: how long a statement on its connections may wait for a lock (the service's processes; not
 * the scripts, whose migrations may wait). `caPem`: DATABASE_CA_FILE. An absent sslmode is settled first.
 */
export async function openOrm(
  databaseUrl: string,
  poolMax = 10,
  options: { lockTimeoutMs?: number; caPem?: string } = {},
): Promise<MikroORM> {
  return MikroORM.init(ormOptions(await settleSslmode(databaseUrl), poolMax, options));
}

const withMigrator = new WeakSet<MikroORM>();

/** Applies every pending committed migration (loads the migrator extension on first use). */
export async function migrate(orm: MikroORM): Promise<string[]> {
  if (!withMigrator.has(orm)) {
    const { Migrator } = await import('@mikro-orm/migrations');
    Migrator.register(orm);
    withMigrator.add(orm);
  }
  const applied = await orm.migrator.up();
  return applied.map(m => m.name);
}
