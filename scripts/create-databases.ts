import pg from 'pg';
import { loadConfig } from '../config/env.js';
import { postgresConnection, settleSslmode } from '../config/postgres-tls.js';
import { runScript } from './run-script.js';

/**
 * Creates the development database and `<name>_test` when missing (idempotent). A database that already
 * accepts a connection needs nothing, and a managed service's user may not open the `postgres` database.
 */
export async function createDatabases(
  databaseUrl: string,
  extra: string[] = [],
  caPem?: string,
): Promise<string[]> {
  databaseUrl = await settleSslmode(databaseUrl);
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const wanted = [name, ...extra];
  if (extra.length === 0 && (await opens(databaseUrl, caPem))) return [];
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const { connectionString, ssl } = postgresConnection(admin.toString(), caPem);
  const client = new pg.Client({ connectionString, ssl });
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

async function opens(databaseUrl: string, caPem: string | undefined): Promise<boolean> {
  const { connectionString, ssl } = postgresConnection(databaseUrl, caPem);
  const client = new pg.Client({ connectionString, ssl });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runScript(async () => {
    const config = loadConfig();
    const name = new URL(config.databaseUrl).pathname.slice(1);
    const created = await createDatabases(
      config.databaseUrl,
      name.endsWith('_test') ? [] : [`${name}_test`],
      config.databaseCa,
    );
    console.log(created.length ? `created: ${created.join(', ')}` : 'databases already exist');
  });
}
