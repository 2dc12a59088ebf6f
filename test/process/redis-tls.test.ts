import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { makeCertificates, missingBinary, type TestCertificates } from '../support/certificates.js';
import { TestRedis } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { signIn, startOidcSetup } from '../support/oidc.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';
import { startupFailure } from '../support/startup-failure.js';
import { apiClient, startTestApp } from '../support/test-app.js';
import { testEnv } from '../support/test-env.js';
import { createUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitFor } from '../support/wait-for.js';
import { scaled } from '../support/machine-time.js';

/** A managed Redis as platforms run it: TLS only (`--tls-port`, no plain port), certificate from a private CA. */
describe('Redis over TLS (test-owned redis-server --tls-port, private CA)', function () {
  this.timeout(120000);
  let certs: TestCertificates | undefined;
  let server: TestRedis | undefined;
  let inspect: Redis | undefined;

  before(async function () {
    const missing = missingBinary(['redis-server', 'openssl']);
    if (missing) {
      console.log(`      skipped: ${missing}`);
      return this.skip();
    }
    certs = makeCertificates();
    server = new TestRedis(await freePort(), { tls: certs });
    await server.start();
    inspect = server.client();
  });
  after(async () => {
    inspect?.disconnect();
    await server?.stop();
    certs?.remove();
  });

  const keys = async (prefix: string) => (await inspect!.keys(`${prefix}:*`)).sort();

  it('When REDIS_URL is rediss:// with REDIS_CA_FILE, then a browser sign-in keeps its session there, a write is drained by a worker through its queues, and the login limiter counts there', async () => {
    const setup = await startOidcSetup({ REDIS_URL: server!.url, REDIS_CA_FILE: certs!.caFile });
    let workers: RunningWorkers | undefined;
    try {
      const prefix = setup.app.services.config.redisPrefix;
      const browser = setup.browser();
      const { session } = await signIn(setup, browser, `tls-${randomUUID().slice(0, 8)}@example.test`);
      expect(session).to.be.a('string');
      expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(200);
      expect((await keys(prefix)).some(key => key.startsWith(`${prefix}:sess:`))).to.equal(true);

      const client = apiClient(setup.app);
      const admin = await createUser(setup.app.services, 'ROLE_ADMIN', 'admin');
      const supplier = await newSupplier(client, admin.auth);
      const item = await newItem(client, admin.auth, supplier.id);
      await client
        .patch(`/api/inventory/${item.id}/quantity?delta=4&reason=RESTOCK`)
        .set('Authorization', admin.auth)
        .expect(200);
      workers = startWorkers(setup.app.services, { clock: false });
      await waitFor(
        async () => {
          const res = await client
            .get(`/api/stock-history/item/${item.id}`)
            .set('Authorization', admin.auth)
            .expect(200);
          const body = res.body as unknown[] | { content: unknown[] };
          return (Array.isArray(body) ? body : body.content).length >= 2;
        },
        20000,
        'the worker to write the history',
      );
      expect((await keys(prefix)).some(key => key.startsWith(`${prefix}:stock-history:`))).to.equal(true);

      await client
        .post('/api/auth/login')
        .send({ username: admin.username, password: 'not-the-password' })
        .expect(401);
      expect((await keys(prefix)).some(key => key.startsWith(`${prefix}:login:`))).to.equal(true);
    } finally {
      await workers?.close();
      await setup.close();
    }
  });

  it('When REDIS_CA_FILE names another CA, then start-up stops within 10 s with one line naming Redis, its host and the setting', async () => {
    const failure = await startupFailure(
      spawnStockroom(
        ['--web'],
        testEnv({
          PORT: String(await freePort()),
          LOG_LEVEL: 'info',
          REDIS_URL: server!.url,
          REDIS_CA_FILE: certs!.otherCaFile,
        }),
      ),
    );
    expect(failure.ms, failure.output).to.be.below(scaled(10000));
    expect(failure.code, failure.output).to.equal(1);
    expect(failure.lines, failure.output).to.have.length(1);
    expect(failure.lines[0]).to.contain(`Redis at 127.0.0.1:${server!.port}`).and.contain('REDIS_CA_FILE');
  });

  it('When the certificate cannot be verified and REDIS_TLS_REJECT_UNAUTHORIZED=false, then it is accepted (explicit opt-in), by the start-up check and the app', async () => {
    const port = await freePort();
    const env = { REDIS_URL: server!.url, REDIS_TLS_REJECT_UNAUTHORIZED: 'false' };
    const child = spawnStockroom(['--web'], testEnv({ PORT: String(port), LOG_LEVEL: 'info', ...env }));
    try {
      await waitForHttp(`http://127.0.0.1:${port}/api/health`, 30000);
      child.kill('SIGTERM');
      expect(await waitForExit(child, 30000), child.output()).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const app = await startTestApp(env, { migrate: false });
    try {
      const prefix = app.services.config.redisPrefix;
      await apiClient(app)
        .post('/api/auth/login')
        .send({ username: 'nobody', password: 'wrong-password' })
        .expect(401);
      expect((await keys(prefix)).some(key => key.startsWith(`${prefix}:login:`))).to.equal(true);
    } finally {
      await app.close();
    }
  });
});
