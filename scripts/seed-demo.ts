import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config/env.js';
import { loadConfig } from '../config/env.js';
import { migrate, openOrm } from '../config/database.js';
import { ensureDemoUsers } from '../domain/users/ensure-demo-users.js';
import { seedDemoProducts } from '../domain/catalog/seed-demo-products.js';
import { seedDemoInventory } from '../domain/inventory/seed-demo-inventory.js';
import { createDatabases } from './create-databases.js';
import { runScript } from './run-script.js';

/** One module's demo data: creates what is missing and returns how many records it created. */
export interface DemoSeeder {
  name: string;
  seed: (em: EntityManager, nodeEnv: string) => Promise<number>;
}

/**
 * Every demo seeder, run in this order. Each one is idempotent on its own; add a module's seeder here
 * (e.g. suppliers, inventory items and stock history) and both `npm run seed:demo` and the start command use it.
 */
export const DEMO_SEEDERS: DemoSeeder[] = [
  { name: 'users', seed: async (em, nodeEnv) => (await ensureDemoUsers(em, nodeEnv)).length },
  { name: 'products', seed: seedDemoProducts },
  { name: 'inventory', seed: em => seedDemoInventory(em) },
];

export class DemoDataRefusedError extends Error {
  constructor() {
    super('Demo data is never created when NODE_ENV=production');
    this.name = 'DemoDataRefusedError';
  }
}

/** Runs every demo seeder; refused in production. Returns what each seeder created. */
export async function seedDemoData(
  orm: MikroORM,
  config: Pick<Config, 'nodeEnv'>,
  seeders: readonly DemoSeeder[] = DEMO_SEEDERS,
): Promise<Record<string, number>> {
  if (config.nodeEnv === 'production') throw new DemoDataRefusedError();
  const created: Record<string, number> = {};
  for (const seeder of seeders) created[seeder.name] = await seeder.seed(orm.em.fork(), config.nodeEnv);
  return created;
}

/** True when the product table holds no row (the start command seeds only an empty database). */
export async function productTableIsEmpty(orm: MikroORM): Promise<boolean> {
  const rows = await orm.em.fork().execute<{ one: number }[]>('select 1 as one from product limit 1');
  return rows.length === 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runScript(async () => {
    const config = loadConfig();
    if (config.nodeEnv === 'production') {
      console.error(new DemoDataRefusedError().message);
      process.exit(1);
    }
    await createDatabases(config.databaseUrl, [], config.databaseCa);
    const orm = await openOrm(config.databaseUrl, 2, { caPem: config.databaseCa });
    try {
      await migrate(orm);
      const created = await seedDemoData(orm, config);
      console.log(
        `demo data: ${Object.entries(created)
          .map(([name, n]) => `${n} ${name} created`)
          .join(', ')} (existing records left as they are)`,
      );
    } finally {
      await orm.close(true);
    }
  });
}
