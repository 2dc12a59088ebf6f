import pg from 'pg';
import { loadConfig } from '../config/env.js';
import { runScript } from './run-script.js';

/** Creates the development database and `<name>_test` when missing (idempotent). */
export async function createDatabases(databaseUrl: string, extra: string[] = []): Promise<string[]> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const wanted = [name, ...extra];
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const created: string[] = [];
  try {
    for (const db of wanted) {
      const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [db]);
      if (rowCount === 0) {
        await client.query(`create database "${db.replaceAll('"', '""')}"`);
        created.push(db);
      }
    }
  } finally {
    await client.end();
  }
  return created;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runScript(async () => {
    const config = loadConfig();
    const name = new URL(config.databaseUrl).pathname.slice(1);
    const created = await createDatabases(config.databaseUrl, name.endsWith('_test') ? [] : [`${name}_test`]);
    console.log(created.length ? `created: ${created.join(', ')}` : 'databases already exist');
  });
}
