import { expect } from 'chai';
import type { Services } from '../../config/services.js';
import { api, testApp } from '../setup/hooks.js';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled, waitForItemConsumersDone } from '../support/settle.js';
import { TestRedis, WorkerProcess } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { assertChain } from '../support/history.js';

async function historyCount(
  services: Services,
  itemIds: string[],
): Promise<{ rows: number; events: number; distinct: number }> {
  const [row] = await services.orm.em.fork().execute<{ rows: string; events: string; distinct: string }[]>(
    `select (select count(*) from stock_history where item_id::text = any(string_to_array(?, ','))) as rows,
            (select count(distinct outbox_event_id) from stock_history where item_id::text = any(string_to_array(?, ','))) as distinct,
            (select count(*) from outbox_event where aggregate_id = any(string_to_array(?, ','))) as events`,
    [itemIds.join(','), itemIds.join(','), itemIds.join(',')],
  );
  return { rows: Number(row.rows), events: Number(row.events), distinct: Number(row.distinct) };
}

async function makeItems(client: ApiClient, admin: TestUser, n: number, quantity = 1000): Promise<string[]> {
  const supplier = await newSupplier(client, admin.auth);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await newItem(client, admin.auth, supplier.id, { quantity })).id);
  return ids;
}

const adjust = (client: ApiClient, user: TestUser, itemId: string, delta: number) =>
  client
    .patch(`/api/inventory/${itemId}/quantity?delta=${delta}&reason=${delta > 0 ? 'RESTOCK' : 'SALE'}`)
    .set('Authorization', user.auth);

describe('Crash safety of the stock-history pipeline (R5, R7, R8)', function () {
  this.timeout(180000);

  it('When the worker is kill -9ed repeatedly while 1,000 events flow, then 0 lost and 0 duplicates', async () => {
    const services = testApp().services;
    const admin = await createUser(services, 'ROLE_ADMIN', 'admin');
    const user = await createUser(services, 'ROLE_USER');
    const items = await makeItems(api(), admin, 20);
    const worker = new WorkerProcess({
      REDIS_PREFIX: services.config.redisPrefix,
      REDIS_URL: services.config.redisUrl,
    });
    await worker.start();
    try {
      let done = 0;
      const writes = inLanes(1000 - items.length, 40, async i => {
        const res = await adjust(api(), user, items[i % items.length], i % 2 === 0 ? 1 : -1);
        done++;
        return res.status;
      });
      let kills = 0;
      for (const threshold of [250, 500, 750]) {
        while (done < threshold) await new Promise(resolve => setImmediate(resolve));
        await worker.kill();
        kills++;
        await worker.start();
      }
      const lastRestart = Date.now();
      const statuses = await writes;
      expect(statuses.filter(s => s !== 200)).to.deep.equal([]);
      expect(kills).to.equal(3);
      const lastWrite = Date.now();
      await waitForHistorySettled(services, 60000);
      console.log(
        `      backlog drained ${Date.now() - lastWrite} ms after the last write, ${Date.now() - lastRestart} ms after the last restart (3 kills)`,
      );
      const counts = await historyCount(services, items);
      expect(counts.events).to.equal(1000);
      expect(counts.rows).to.equal(1000);
      expect(counts.distinct).to.equal(1000);
      for (const id of items) await assertChain(services, id);
    } finally {
      await worker.stop();
    }
  });

  it('When two worker processes sweep 500 changes over 50 items with no fast path, then each is recorded exactly once', async () => {
    const services = testApp().services;
    const admin = await createUser(services, 'ROLE_ADMIN', 'admin');
    const user = await createUser(services, 'ROLE_USER');
    const items = await makeItems(api(), admin, 50, 100);
    // The workers listen under another prefix than the API enqueues to: only their sweepers find the events.
    const env = { REDIS_PREFIX: `${services.config.redisPrefix}x`, REDIS_URL: services.config.redisUrl };
    const workers = [new WorkerProcess(env), new WorkerProcess(env)];
    await Promise.all(workers.map(w => w.start()));
    try {
      const statuses = await inLanes(
        450,
        30,
        async i => (await adjust(api(), user, items[i % items.length], i % 3 === 0 ? -1 : 1)).status,
      );
      expect(statuses.filter(s => s !== 200)).to.deep.equal([]);
      await waitForHistorySettled(services, 30000);
      const counts = await historyCount(services, items);
      expect(counts).to.deep.equal({ rows: 500, events: 500, distinct: 500 });
      for (const id of items) await assertChain(services, id);
    } finally {
      await Promise.all(workers.map(w => w.stop()));
    }
  });

  describe('with a test-owned Redis', () => {
    let redis: TestRedis;
    let app: TestApp;
    let client: ApiClient;
    let admin: TestUser;
    let user: TestUser;

    before(async function () {
      this.timeout(60000);
      redis = new TestRedis(await freePort());
      await redis.start();
      app = await startTestApp({ REDIS_URL: redis.url }, { migrate: false });
      client = apiClient(app);
      admin = await createUser(app.services, 'ROLE_ADMIN', 'admin');
      user = await createUser(app.services, 'ROLE_USER');
    });
    after(async () => {
      await app?.close();
      await redis?.stop();
    });

    const workerEnv = () => ({ REDIS_PREFIX: app.services.config.redisPrefix, REDIS_URL: redis.url });

    it('When Redis stops during 200 writes, then every write is 2xx and history completes within 5 s after it returns', async () => {
      const items = await makeItems(client, admin, 10);
      const worker = new WorkerProcess(workerEnv());
      await worker.start();
      try {
        const latencies: number[] = [];
        let done = 0;
        const writes = inLanes(200, 10, async i => {
          const started = Date.now();
          const res = await adjust(client, user, items[i % items.length], i % 2 === 0 ? 1 : -1);
          if (done >= 50) latencies.push(Date.now() - started);
          done++;
          return res.status;
        });
        while (done < 50) await new Promise(resolve => setImmediate(resolve));
        await redis.stop();
        const statuses = await writes;
        expect(statuses.filter(s => s < 200 || s >= 300)).to.deep.equal([]);
        latencies.sort((a, b) => a - b);
        const p99 = latencies[Math.floor(latencies.length * 0.99)];
        console.log(
          `      writes while Redis was down: p99 ${p99} ms, max ${latencies[latencies.length - 1]} ms`,
        );
        await redis.start();
        const back = Date.now();
        await waitForHistorySettled(app.services, 5000);
        console.log(`      history complete ${Date.now() - back} ms after Redis returned`);
        const counts = await historyCount(app.services, items);
        expect(counts.rows).to.equal(counts.events);
        expect(counts.distinct).to.equal(counts.events);
        for (const id of items) await assertChain(app.services, id);
      } finally {
        await worker.stop();
      }
    });

    it('When Redis restarts empty with jobs queued, then nothing is lost (history, analytics rollups, alerts)', async () => {
      const items = await makeItems(client, admin, 5);
      const statuses = await inLanes(
        300,
        10,
        async i => (await adjust(client, user, items[i % items.length], 1)).status,
      );
      expect(statuses.filter(s => s !== 200)).to.deep.equal([]);
      await redis.stop();
      await redis.start();
      const worker = new WorkerProcess(workerEnv());
      await worker.start();
      try {
        await waitForHistorySettled(app.services, 20000);
        const counts = await historyCount(app.services, items);
        expect(counts.events).to.equal(305);
        expect(counts.rows).to.equal(305);
        expect(counts.distinct).to.equal(305);
        // The analytics and low-stock consumers lose nothing either: their markers settle and the rollups
        // count every event (5 creations with 1,000 each, then 300 x +1).
        const em = () => app.services.orm.em.fork();
        const ids = items.join(',');
        await waitForItemConsumersDone(em(), items, 20000, 'the analytics and alerts markers');
        const [rollup] = await em().execute<{ entries: string; net: string }[]>(
          `select sum(entries) as entries, sum(qty_in) - sum(qty_out) as net from analytics_item_day
           where item_id::text = any(string_to_array(?, ','))`,
          [ids],
        );
        expect(Number(rollup.entries)).to.equal(305);
        expect(Number(rollup.net)).to.equal(5 * 1000 + 300);
      } finally {
        await worker.stop();
      }
    });
  });
});
