import { loadConfig } from '../config/env.js';
import { migrate, openOrm } from '../config/database.js';
import { createDatabases } from './create-databases.js';
import { runScript } from './run-script.js';

await runScript(async () => {
  const config = loadConfig();
  await createDatabases(config.databaseUrl);
  const orm = await openOrm(config.databaseUrl, 2);
  try {
    const applied = await migrate(orm);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await orm.close(true);
  }
});
