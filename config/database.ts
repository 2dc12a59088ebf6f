import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions } from './mikro-orm.config.js';

/** Opens the ORM. MikroORM 7 connects lazily, so a database that is down fails requests (503), not start-up. */
export async function openOrm(databaseUrl: string, poolMax = 10): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, poolMax));
}

/** Applies every pending committed migration. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map(m => m.name);
}
