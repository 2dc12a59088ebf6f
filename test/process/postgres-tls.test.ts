import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import pg from 'pg';
import { createDatabases } from '../../scripts/create-databases.js';
import { postgresConnection } from '../../config/postgres-tls.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { makeCertificates, missingBinary, type TestCertificates } from '../support/certificates.js';
import { postgresIds, TestPostgres } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { spawnStockroom, waitForExit } from '../support/spawn-stockroom.js';
import { apiClient, startTestApp, type TestApp } from '../support/test-app.js';
import { testEnv } from '../support/test-env.js';
import { createUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitFor } from '../support/wait-for.js';
import { startupFailure } from '../support/startup-failure.js';
import { scaled } from '../support/machine-time.js';

/**
 * A managed PostgreSQL as platforms run it: TLS only (`hostssl` rules, so a plain connection is refused), with a
 * server certificate from a private CA. Stockroom reads `sslmode` from DATABASE_URL as libpq does.
 */
describe('PostgreSQL over TLS (test-owned cluster, ssl=on, hostssl only, private CA)', function () {
  this.timeout(180000);
  let certs: TestCertificates | undefined;
  let server: TestPostgres | undefined;
  const url = (sslmode: string) => `${server!.url}?sslmode=${sslmode}`;

  before(async function () {
    const missing = TestPostgres.missing() ?? missingBinary(['openssl']);
    if (missing) {
      console.log(`      skipped: ${missing}`);
      return this.skip();
    }
    certs = makeCertificates(process.getuid?.() === 0 ? postgresIds() : undefined);
    server = new TestPostgres(await freePort(), { tls: certs });
    await server.init();
    await server.start();
  });
  after(async () => {
    await server?.destroy();
    certs?.remove();
  });

  it('When DATABASE_URL says verify-full and DATABASE_CA_FILE names the CA, then the release step migrates, and requests, streams, the account feed and a worker drain all run over TLS', async () => {
    expect(await release({ DATABASE_URL: url('verify-full'), DATABASE_CA_FILE: certs!.caFile })).to.contain(
      'applied:',
    );

    let app: TestApp | undefined;
    let workers: RunningWorkers | undefined;
    try {
      app = await startTestApp(
        { DATABASE_URL: url('verify-full'), DATABASE_CA_FILE: certs!.caFile },
        { migrate: false },
      );
      const client = apiClient(app);
      const admin = await createUser(app.services, 'ROLE_ADMIN', 'admin');
      const supplier = await newSupplier(client, admin.auth);
      const item = await newItem(client, admin.auth, supplier.id, { quantity: 10 });
      for (const delta of [3, -2, 5])
        await client
          .patch(`/api/inventory/${item.id}/quantity?delta=${delta}&reason=RESTOCK`)
          .set('Authorization', admin.auth)
          .expect(200);
      workers = startWorkers(app.services, { clock: false });
      // The drain ran over TLS: the worker's consumers wrote the history (creation + 3 changes).
      const history = await waitFor(
        async () => {
          const res = await client.get('/api/stock-history').set('Authorization', admin.auth).expect(200);
          const rows = (res.body as { itemId: string; resultingQuantity?: number }[]).filter(
            row => String(row.itemId) === String(item.id),
          );
          return rows.length >= 4 ? rows : undefined;
        },
        20000,
        'history of the item',
      );
      expect(history).to.have.length(4);
      // The history's export is read off the TLS socket itself (CsvCopyOut).
      const csv = await client
        .get('/api/stock-history/export.csv')
        .set('Authorization', admin.auth)
        .expect(200);
      expect(csv.text.split('\r\n').filter(line => line.includes(String(item.id)))).to.have.length(4);
      // The unpaged history above streamed from the stream pool, this list from the list pool; the account feed
      // listens once a bearer was read.
      await client.get('/api/inventory').set('Authorization', admin.auth).expect(200);
      await waitFor(
        async () => (await tlsByApplication(url('verify-full'), certs!.caFile)).has('stockroom-accounts'),
        10000,
        'the account feed over TLS',
      );
      const names = await tlsByApplication(url('verify-full'), certs!.caFile);
      const pools = [
        'stockroom',
        'stockroom-consumer',
        'stockroom-stream',
        'stockroom-list',
        'stockroom-accounts',
      ];
      for (const name of pools)
        expect(names.get(name), `${name}: ${JSON.stringify([...names])}`).to.equal(true);
    } finally {
      await workers?.close();
      await app?.close();
    }
  });

  it('When DATABASE_URL says require and the CA is unknown to Stockroom (no CA file, or another CA file), then it runs: require encrypts and never verifies, as libpq', async () => {
    await servesOverTls({ DATABASE_URL: url('require') });
    await servesOverTls({ DATABASE_URL: url('require'), DATABASE_CA_FILE: certs!.otherCaFile });
  });

  it("When DATABASE_URL has no sslmode (as a platform add-on sets it), then TLS is used because the server offers it (libpq's default, prefer), by the release step and the app", async () => {
    await release({ DATABASE_URL: server!.url });
    await servesOverTls({ DATABASE_URL: server!.url });
  });

  it('When verify-full meets a certificate of an unknown CA, or sslmode is disable against a TLS-only server, then start-up stops within 10 s with one line naming PostgreSQL, its host and the setting', async () => {
    const host = `127.0.0.1:${server!.port}`;
    const cases: { env: Record<string, string>; setting: string }[] = [
      {
        env: { DATABASE_URL: url('verify-full'), DATABASE_CA_FILE: certs!.otherCaFile },
        setting: 'DATABASE_CA_FILE',
      },
      { env: { DATABASE_URL: url('verify-full') }, setting: 'DATABASE_CA_FILE' },
      { env: { DATABASE_URL: url('disable') }, setting: 'sslmode' },
    ];
    // One at a time: each is a whole Node process loading the app, on a machine shared with other suites.
    for (const { env, setting } of cases) {
      const failure = await startupFailure(
        spawnStockroom(['--web'], testEnv({ PORT: String(await freePort()), LOG_LEVEL: 'info', ...env })),
      );
      expect(failure.ms, failure.output).to.be.below(scaled(10000));
      expect(failure.code, failure.output).to.equal(1);
      expect(failure.lines, failure.output).to.have.length(1);
      expect(failure.lines[0]).to.contain(`PostgreSQL at ${host}`).and.contain(setting);
      if (process.env.TEST_SHOW_FIGURES) console.log(failure.ms, failure.lines[0]);
    }
  });

  it('When the database named by a verify-full URL is missing, then createDatabases makes it over TLS', async () => {
    const name = `tls_created_${process.pid}`;
    const target = url('verify-full').replace('/stockroom_crash?', `/${name}?`);
    expect(await createDatabases(target, [], readFileSync(certs!.caFile, 'utf8'))).to.deep.equal([name]);
  });
});

/** The release step (`scripts/migrate.ts`, the Procfile's release line) with `env`: its output, once it exited 0. */
async function release(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], {
    env: { ...process.env, ...testEnv(env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  expect(await waitForExit(child, 60000), output).to.equal(0);
  return output;
}

/** An app with `env` answers an authenticated request, and its ORM connection uses TLS. */
async function servesOverTls(env: Record<string, string>): Promise<void> {
  const app = await startTestApp(env, { migrate: false });
  try {
    const admin = await createUser(app.services, 'ROLE_ADMIN', 'admin');
    await apiClient(app).get('/api/inventory/count').set('Authorization', admin.auth).expect(200);
    const [row] = await app.services.orm.em
      .fork()
      .execute<{ ssl: boolean }[]>('select ssl from pg_stat_ssl where pid = pg_backend_pid()');
    expect(row.ssl).to.equal(true);
  } finally {
    await app.close();
  }
}

/** Per application_name of the connections now open: whether every one of them uses TLS. */
async function tlsByApplication(databaseUrl: string, caFile: string): Promise<Map<string, boolean>> {
  const { connectionString, ssl } = postgresConnection(databaseUrl, readFileSync(caFile, 'utf8'));
  const client = new pg.Client({ connectionString, ssl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; ssl: boolean }>(
      `select a.application_name as name, bool_and(s.ssl) as ssl
         from pg_stat_activity a join pg_stat_ssl s using (pid)
        where a.application_name like 'stockroom%' group by 1`,
    );
    return new Map(rows.map(row => [row.name, row.ssl]));
  } finally {
    await client.end();
  }
}
