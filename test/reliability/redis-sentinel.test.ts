import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { TestRedis, TestSentinel } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { signIn, startOidcSetup, type OidcSetup } from '../support/oidc.js';
import { apiClient, type ApiClient } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitFor } from '../support/wait-for.js';
import type { BrowserClient } from '../support/browser-client.js';

const NAME = 'stockroom';
const WRITE_EVERY_MS = 20;
const FRONT_END = 'https://front.example';

interface Write {
  itemId: string;
  via: 'bearer' | 'session';
  status: number;
}

/**
 * Issue 31, Redis Sentinel: a test-owned master, a replica and three Sentinels on spare ports; the app finds the
 * master through the Sentinels only (REDIS_URL names a closed port). A SENTINEL FAILOVER during a write load
 * with a signed-in browser session costs no write and not the session, loses no event, and the queues wake
 * the consumers again within 5 s (the sweeper is off, so only a queue wake-up can drain anything).
 */
describe('Redis Sentinel failover (test-owned master, replica and three Sentinels)', function () {
  this.timeout(180000);
  let master: TestRedis;
  let replica: TestRedis;
  const sentinels: TestSentinel[] = [];
  const inspectors: Redis[] = [];
  let setup: OidcSetup;
  let client: ApiClient;
  let workers: RunningWorkers | undefined;
  let admin: TestUser;
  let user: TestUser;

  const sentinel = () => {
    const c = sentinels[0].client();
    inspectors.push(c);
    return c;
  };
  const masterPort = async () =>
    Number(((await sentinel().call('SENTINEL', 'get-master-addr-by-name', NAME)) as string[])[1]);

  before(async function () {
    this.timeout(120000);
    master = new TestRedis(await freePort());
    await master.start();
    replica = new TestRedis(await freePort(), { args: ['--replicaof', '127.0.0.1', String(master.port)] });
    await replica.start();
    const replicaClient = replica.client();
    inspectors.push(replicaClient);
    await waitFor(
      async () => (await replicaClient.info('replication')).includes('master_link_status:up'),
      20000,
      'the replica in sync',
    );
    for (let i = 0; i < 3; i += 1) {
      const s = new TestSentinel(await freePort(), master.port, NAME);
      sentinels.push(s);
      await s.start();
    }
    // Each Sentinel must know the replica and the two other Sentinels before a failover can be ordered.
    await waitFor(
      async () => {
        for (const s of sentinels) {
          const c = s.client();
          try {
            const replicas = (await c.call('SENTINEL', 'replicas', NAME)) as string[][];
            const peers = (await c.call('SENTINEL', 'sentinels', NAME)) as string[][];
            if (replicas.length < 1 || peers.length < 2) return false;
            const flags = replicas[0][replicas[0].indexOf('flags') + 1];
            if (flags !== 'slave') return false;
          } finally {
            c.disconnect();
          }
        }
        return true;
      },
      60000,
      'the Sentinels to know the replica and each other',
    );

    setup = await startOidcSetup({
      REDIS_URL: `redis://127.0.0.1:${await freePort()}/0`,
      REDIS_SENTINELS: sentinels.map(s => `127.0.0.1:${s.port}`).join(','),
      REDIS_SENTINEL_NAME: NAME,
      // No sweeper: whatever drains after the failover was woken through the queues.
      OUTBOX_SWEEP_INTERVAL_MS: '600000',
    });
    client = apiClient(setup.app);
    admin = await createUser(setup.app.services, 'ROLE_ADMIN', 'admin');
    user = await createUser(setup.app.services, 'ROLE_USER', 'writer');
    workers = startWorkers(setup.app.services, { clock: false });
  });
  after(async function () {
    this.timeout(60000);
    try {
      await workers?.close();
      await setup?.close();
    } finally {
      for (const c of inspectors) c.disconnect();
      for (const s of sentinels) await s.stop();
      await replica?.stop();
      await master?.stop();
    }
  });

  const historyCount = async (itemId: string): Promise<number> => {
    const res = await client
      .get(`/api/stock-history/item/${itemId}`)
      .set('Authorization', admin.auth)
      .expect(200);
    return (res.body as unknown[]).length;
  };

  it('When the Sentinels fail the master over during writes and a browser session, then every write is 2xx, the session stays valid, every event is drained, and queue wake-ups resume within 5 s', async () => {
    const browser: BrowserClient = setup.browser();
    const { session } = await signIn(setup, browser, `sentinel-${randomUUID().slice(0, 8)}@example.test`);
    expect(session).to.be.a('string');
    expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(200);
    const prefix = setup.app.services.config.redisPrefix;
    // The session is older than the replication lag: it is on the replica before the failover.
    await waitFor(
      async () => (await inspectors[0].keys(`${prefix}:sess:*`)).length > 0,
      5000,
      'session replicated',
    );

    const supplier = await newSupplier(client, admin.auth);
    const items: string[] = [];
    for (let i = 0; i < 4; i += 1)
      items.push((await newItem(client, admin.auth, supplier.id, { quantity: 100 })).id);
    const oldMaster = await masterPort();
    expect(oldMaster).to.equal(master.port);

    const writes: Write[] = [];
    const sessionReads: number[] = [];
    const inFlight = new Set<Promise<unknown>>();
    let sent = 0;
    const fire = () => {
      const n = sent++;
      const itemId = items[n % items.length];
      const url = `${setup.appUrl}/api/inventory/${itemId}/quantity?delta=1&reason=RESTOCK`;
      const via = n % 5 === 4 ? 'session' : 'bearer';
      const request = (
        via === 'session'
          ? browser.request(url, { method: 'PATCH', headers: { origin: FRONT_END } })
          : fetch(url, { method: 'PATCH', headers: { authorization: user.auth } })
      ).then(
        async res => {
          await res.arrayBuffer();
          writes.push({ itemId, via, status: res.status });
        },
        () => writes.push({ itemId, via, status: 0 }),
      );
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
      if (n % 10 === 0) {
        const read = browser.request(`${setup.appUrl}/api/me`).then(
          async res => {
            await res.arrayBuffer();
            sessionReads.push(res.status);
          },
          () => sessionReads.push(0),
        );
        inFlight.add(read);
        void read.finally(() => inFlight.delete(read));
      }
    };
    const ticker = setInterval(fire, WRITE_EVERY_MS);
    try {
      await waitFor(() => writes.length >= 50, 20000, '50 writes before the failover');
      await sentinel().call('SENTINEL', 'FAILOVER', NAME);
      await waitFor(async () => (await masterPort()) === replica.port, 30000, 'the replica promoted');
      const promotedAt = writes.length;
      await waitFor(() => writes.length >= promotedAt + 100, 30000, '100 writes after the failover');
    } finally {
      clearInterval(ticker);
      await Promise.all([...inFlight]);
    }

    expect(
      writes.filter(w => w.status !== 200),
      'writes that were not 2xx',
    ).to.deep.equal([]);
    expect(writes.filter(w => w.via === 'session').length).to.be.greaterThan(0);
    expect(
      sessionReads.filter(s => s !== 200),
      'session reads that were not 200',
    ).to.deep.equal([]);
    // The session outlived the failover: it was replicated before it.
    expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(200);

    // Queue wake-ups again: with the sweeper off, one more write's doorbell drains every event within 5 s.
    await client
      .patch(`/api/inventory/${items[0]}/quantity?delta=1&reason=RESTOCK`)
      .set('Authorization', user.auth)
      .expect(200);
    const expected = new Map(items.map(id => [id, 1 + writes.filter(w => w.itemId === id).length]));
    expected.set(items[0], expected.get(items[0])! + 1);
    await waitFor(
      async () => {
        for (const [id, count] of expected) if ((await historyCount(id)) !== count) return false;
        return true;
      },
      5000,
      'every event drained through the queues',
    );
    for (const [id, count] of expected) {
      const item = await client.get(`/api/inventory/${id}`).set('Authorization', admin.auth).expect(200);
      expect((item.body as { quantity: number }).quantity).to.equal(100 + count - 1);
    }
  });
});
