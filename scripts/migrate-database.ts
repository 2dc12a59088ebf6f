import { loadConfig } from '../config/env.js';
import { migrate, openOrm } from '../config/database.js';
import { createDatabases } from './create-databases.js';
import { runScript } from './run-script.js';
import { checkConnections } from '../config/connection-check.js';
import { ensureBootstrapAdmin } from '../domain/users/ensure-bootstrap-admin.js';

await runScript(async () => {
  const config = loadConfig();
  await checkConnections(config, ['postgres']);
  await createDatabases(config.databaseUrl, [], config.databaseCa);
  const orm = await openOrm(config.databaseUrl, 2, { caPem: config.databaseCa });
  try {
    const applied = await migrate(orm);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    // A Procfile deploy runs web processes with no start-up data step of their own: the release makes the
    // first password admin, so a fresh deploy can sign in.
    if (await ensureBootstrapAdmin(orm.em.fork(), config.bootstrapAdmin))
      console.log(`bootstrap admin created: ${config.bootstrapAdmin!.username}`);
  } finally {
    await orm.close(true);
  }
});
