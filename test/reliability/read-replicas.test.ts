import { expect } from 'chai';
import pg from 'pg';
import { createDatabases } from '../../scripts/create-databases.js';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { TestPostgres } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait-for.js';
import { completeHistory } from '../support/stock-events.js';

const MAX_LAG_MS = 3000;

/** What /metrics says about where the replica-eligible reads ran. */
async function routedReads(client: ApiClient): Promise<Record<'replica' | 'primary' | 'fallback', number>> {
  const text = (await client.get('/metrics').expect(200)).text;
  const read = (target: string) =>
    Number(
      new RegExp(`stockroom_replica_routed_reads_total\\{target="${target}"\\} (\\d+)`).exec(text)?.[1] ?? 0,
    );
  return { replica: read('replica'), primary: read('primary'), fallback: read('fallback') };
}

/**
 * Issue 31, read replicas: a test-owned primary and a streaming replica (`pg_basebackup -R`) on spare ports,
 * the app reading analytics and paged history on the replica while it is caught up with the primary and with
 * the caller's own writes, and on the primary otherwise, without failing a request.
 */
describe('Read replicas (test-owned primary + streaming replica)', function () {
  this.timeout(120000);
  let primary: TestPostgres;
  let replica: TestPostgres;
  let replicaSql: pg.Pool;
  let app: TestApp;
  let client: ApiClient;
  let writer: TestUser;
  let reader: TestUser;
  let supplierId: string;
  let itemId: string;

  const supplierQuantity = async (user: TestUser): Promise<number> => {
    const res = await client
      .get(`/api/analytics/stock-per-supplier`)
      .set('Authorization', user.auth)
      .expect(200);
    return (res.body as { supplierId: string; totalQuantity: number }[]).find(
      s => s.supplierId === supplierId,
    )!.totalQuantity;
  };

  before(async function () {
    this.timeout(120000);
    primary = new TestPostgres(await freePort());
    await primary.init();
    await primary.start();
    await createDatabases(primary.url);
    replica = new TestPostgres(await freePort());
    await replica.initReplicaOf(primary);
    await replica.start();
    replicaSql = new pg.Pool({ connectionString: replica.url, max: 2 });
    replicaSql.on('error', () => undefined);
    app = await startTestApp({
      DATABASE_URL: primary.url,
      DATABASE_REPLICA_URL: replica.url,
      REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    });
    client = apiClient(app);
    writer = await createUser(app.services, 'ROLE_ADMIN', 'writer');
    reader = await createUser(app.services, 'ROLE_USER', 'reader');
    supplierId = (await newSupplier(client, writer.auth)).id;
    itemId = (await newItem(client, writer.auth, supplierId, { quantity: 100 })).id;
    // A second history entry (of another supplier's item), so a history walk has a page after its first.
    await newItem(client, writer.auth, (await newSupplier(client, writer.auth)).id, { quantity: 1 });
    await completeHistory(app.services.orm.em.fork());
  });
  after(async function () {
    this.timeout(60000);
    try {
      await replicaSql?.end();
      await app?.close();
    } finally {
      await replica?.destroy();
      await primary?.destroy();
    }
  });

  it('When the replica is caught up, then analytics and history pages after a walk’s first are served by it', async () => {
    const before = await routedReads(client);
    // The first read starts the lag polling; reads move to the replica once a poll has seen it caught up.
    await waitFor(
      async () => {
        await supplierQuantity(reader);
        return (await routedReads(client)).replica > before.replica;
      },
      10000,
      'a read served by the replica',
    );
    const start = await routedReads(client);
    expect(await supplierQuantity(reader)).to.equal(100);
    await client
      .get(`/api/analytics/item-update-frequency?supplierId=${supplierId}`)
      .set('Authorization', reader.auth)
      .expect(200);
    const after = await routedReads(client);
    expect(after.replica - start.replica).to.equal(2);
    expect(after.primary).to.equal(start.primary);
    // A history walk's first page reads on the primary (its snapshot decides what the whole walk returns, and a
    // hot standby's snapshot lists no transaction in progress); the pages after it on a replica once it has
    // replayed the first page's WAL position.
    const firsts = await Promise.all(
      ['/api/stock-history?size=1', '/api/stock-history/search?size=1'].map(url =>
        client.get(url).set('Authorization', reader.auth).expect(200),
      ),
    );
    expect((await routedReads(client)).primary).to.equal(after.primary + 2);
    for (const first of firsts) {
      const next = /^<([^>]+)>/.exec(first.headers.link)![1];
      await waitFor(
        async () => {
          const before = (await routedReads(client)).replica;
          const page = await client.get(next).set('Authorization', reader.auth).expect(200);
          expect(page.body.totalElements).to.equal(2);
          expect(page.body.content).to.have.length(1);
          return (await routedReads(client)).replica === before + 1;
        },
        10000,
        'a cursor page served by the replica',
      );
    }
    const { rows } = await replicaSql.query(
      "select count(*)::int as n from pg_stat_activity where application_name = 'stockroom' and datname = current_database()",
    );
    expect(rows[0].n).to.be.greaterThan(0);
    // Items themselves, and every write, stay on the primary.
    const onReplica = (await routedReads(client)).replica;
    await client.get(`/api/inventory/${itemId}`).set('Authorization', reader.auth).expect(200);
    expect((await routedReads(client)).replica).to.equal(onReplica);
  });

  it('When replay is paused, then the writer still reads its own write at once, others read the replica until the lag bound, then the primary; resumed, reads return to it', async () => {
    await waitFor(async () => {
      const start = (await routedReads(client)).replica;
      await supplierQuantity(reader);
      return (await routedReads(client)).replica > start;
    }, 10000);
    const quantity = await supplierQuantity(reader);
    await replicaSql.query('select pg_wal_replay_pause()');
    await waitFor(
      async () =>
        (await replicaSql.query('select pg_get_wal_replay_pause_state() as s')).rows[0].s === 'paused',
      10000,
      'replay paused',
    );

    await client
      .patch(`/api/inventory/${itemId}/quantity?delta=5&reason=RESTOCK`)
      .set('Authorization', writer.auth)
      .expect(200);
    const wroteAt = Date.now();
    // Read-your-writes: the writer's read goes to the primary although the replica is within the bound.
    expect(await supplierQuantity(writer)).to.equal(quantity + 5);
    const beforeStale = await routedReads(client);
    // Another client, within the lag bound, is served by the (paused) replica: the old value.
    expect(await supplierQuantity(reader)).to.equal(quantity);
    expect(Date.now() - wroteAt).to.be.lessThan(MAX_LAG_MS);
    expect((await routedReads(client)).replica).to.equal(beforeStale.replica + 1);

    // Once the replica is further behind than the bound, everyone reads the primary (the new value).
    await waitFor(
      async () => (await supplierQuantity(reader)) === quantity + 5,
      3 * MAX_LAG_MS,
      'the new value',
    );
    const movedAfter = Date.now() - wroteAt;
    expect(movedAfter).to.be.lessThan(MAX_LAG_MS + 2000);
    const onPrimary = await routedReads(client);
    expect(await supplierQuantity(reader)).to.equal(quantity + 5);
    expect((await routedReads(client)).primary).to.equal(onPrimary.primary + 1);

    await replicaSql.query('select pg_wal_replay_resume()');
    await waitFor(
      async () => {
        const start = (await routedReads(client)).replica;
        expect(await supplierQuantity(reader)).to.equal(quantity + 5);
        return (await routedReads(client)).replica > start;
      },
      10000,
      'reads back on the resumed replica',
    );
  });

  it('When the replica stops during reads, then no request fails, and reads return to it after it restarts', async () => {
    await waitFor(async () => {
      const start = (await routedReads(client)).replica;
      await supplierQuantity(reader);
      return (await routedReads(client)).replica > start;
    }, 10000);
    const statuses: number[] = [];
    let stopped = false;
    const reads = inLanes(400, 4, async i => {
      const path =
        i % 2 === 0 ? '/api/analytics/stock-per-supplier' : `/api/stock-history/item/${itemId}?size=10`;
      const res = await client.get(path).set('Authorization', reader.auth);
      statuses.push(res.status);
      if (i === 100) {
        await replica.stop('fast');
        stopped = true;
      }
    });
    await reads;
    expect(stopped).to.equal(true);
    expect(statuses).to.have.length(400);
    expect(statuses.filter(s => s !== 200)).to.deep.equal([]);

    await replica.start();
    await waitFor(
      async () => {
        const start = (await routedReads(client)).replica;
        await supplierQuantity(reader);
        return (await routedReads(client)).replica > start;
      },
      15000,
      'reads back on the restarted replica',
    );
  });

  it('When the replica cannot be reached at start, then the app starts and reads on the primary', async () => {
    const lonely = await startTestApp(
      {
        DATABASE_URL: primary.url,
        DATABASE_REPLICA_URL: `postgres://postgres@127.0.0.1:${await freePort()}/none`,
      },
      { migrate: false },
    );
    try {
      const res = await apiClient(lonely)
        .get('/api/analytics/stock-per-supplier')
        .set('Authorization', reader.auth)
        .expect(200);
      expect(res.body).to.be.an('array');
      expect((await routedReads(apiClient(lonely))).primary).to.equal(1);
    } finally {
      await lonely.close();
    }
  });
});
