import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import type { Worker } from 'bullmq';
import type { EntityManager } from '@mikro-orm/postgresql';
import { apiClient, startTestApp, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { startWorkers, PROCESSORS, type RunningWorkers } from '../../workers/main.js';
import { startWorker } from '../../workers/start-worker.js';
import { createRedis } from '../../config/redis.js';
import { createItem, createSupplier, recordStockChange, settleConsumers } from '../support/stock-events.js';
import { waitFor } from '../support/wait-for.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { ALERTS_CONSUMER } from '../../domain/outbox/consumers.js';

const SECRET = 'webhook-secret-for-tests-0123456789';

describe('Low-stock alerts and webhook deliveries', function () {
  this.timeout(60000);
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let app: TestApp;
  let workers: RunningWorkers;
  let user: TestUser;

  before(async () => {
    receiver = await startReceiver(2);
    app = await startTestApp(
      { LOW_STOCK_WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET },
      { migrate: false },
    );
    workers = startWorkers(app.services, { clock: false });
    user = await createUser(app.services);
  });

  after(async () => {
    await workers?.close();
    await app?.close();
    await receiver?.close();
  });

  const deliveriesFor = async (itemId: string) =>
    app.services.orm.em
      .fork()
      .execute<any[]>(
        `select d.* from webhook_delivery d join low_stock_alert a on a.id = d.alert_id where a.item_id = ? order by d.id`,
        [itemId],
      );
  /**
   * Holds the alerts consumer off the item's partition while `write` records its events, so that one batch
   * takes them all.
   */
  const inOneAlertsBatch = async (em: EntityManager, itemId: string, write: () => Promise<void>) => {
    const [{ part }] = await em.execute<{ part: number }[]>('select (hashtext(?) & 15)::int as part', [
      itemId,
    ]);
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1, $2)', [ALERTS_CONSUMER.lockNamespace, part]);
      await write();
      await holder.query('select pg_advisory_unlock($1, $2)', [ALERTS_CONSUMER.lockNamespace, part]);
    } finally {
      await holder.end();
    }
  };

  const alertsFor = async (itemId: string) =>
    app.services.orm.em
      .fork()
      .execute<any[]>('select * from low_stock_alert where item_id = ? order by id', [itemId]);

  it('When an item crosses below its minimum, then one alert, one signed delivery, delivered on the third attempt; crossing back closes it', async () => {
    const em = app.services.orm.em.fork();
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id, price: '3.00', minimumQuantity: 5 });
    await recordStockChange(em, { itemId: item.id, change: 10, reason: 'INITIAL_STOCK', at: new Date() });
    await recordStockChange(em, { itemId: item.id, change: -6, reason: 'SALE', at: new Date() });
    await recordStockChange(em, { itemId: item.id, change: -1, reason: 'SALE', at: new Date() });
    await settleConsumers(app.services);

    const alerts = await alertsFor(item.id);
    expect(alerts).to.have.length(1);
    expect(alerts[0].closed_at).to.equal(null);
    const open = await apiClient(app)
      .get('/api/alerts/low-stock')
      .set('Authorization', user.auth)
      .expect(200);
    const mine = open.body.filter((a: any) => a.itemId === item.id);
    expect(mine).to.have.length(1);
    expect(mine[0]).to.include({ itemName: item.name, quantity: 3, minimumQuantity: 5 });

    await waitFor(
      async () => (await deliveriesFor(item.id))[0]?.status === 'delivered',
      20000,
      'the delivery',
    );
    const [delivery] = await deliveriesFor(item.id);
    expect(await deliveriesFor(item.id)).to.have.length(1);
    expect(delivery).to.include({ status: 'delivered', attempts: 3 });
    const calls = receiver.received.filter(r => JSON.parse(r.body).itemId === item.id);
    expect(calls).to.have.length(3);
    for (const call of calls) {
      const timestamp = String(call.headers['x-stockroom-timestamp']);
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${call.body}`).digest('hex')}`;
      expect(call.headers['x-stockroom-signature']).to.equal(expected);
      expect(Math.abs(Date.now() / 1000 - Number(timestamp))).to.be.lessThan(60);
    }
    expect(JSON.parse(calls[2].body)).to.include({
      type: 'low_stock.opened',
      quantity: 4,
      minimumQuantity: 5,
    });

    await recordStockChange(em, { itemId: item.id, change: 2, reason: 'RESTOCK', at: new Date() });
    await settleConsumers(app.services);
    const closed = await alertsFor(item.id);
    expect(closed).to.have.length(1);
    expect(closed[0].closed_at, 'back at the minimum (3 + 2 = 5)').to.not.equal(null);
    expect(await deliveriesFor(item.id)).to.have.length(1);
  });

  it('When the item is back at its minimum, then the alert closes; a second crossing opens a new one', async () => {
    const em = app.services.orm.em.fork();
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id, price: '3.00', minimumQuantity: 5 });
    await recordStockChange(em, { itemId: item.id, change: 4, reason: 'INITIAL_STOCK', at: new Date() });
    await recordStockChange(em, { itemId: item.id, change: 1, reason: 'RESTOCK', at: new Date() });
    await recordStockChange(em, { itemId: item.id, change: -2, reason: 'SALE', at: new Date() });
    await recordStockChange(em, { itemId: item.id, change: 7, reason: 'RESTOCK', at: new Date() });
    await settleConsumers(app.services);
    const alerts = await alertsFor(item.id);
    expect(alerts.map(a => a.closed_at === null)).to.deep.equal([false, false]);
    const open = await apiClient(app)
      .get('/api/alerts/low-stock')
      .set('Authorization', user.auth)
      .expect(200);
    expect(open.body.filter((a: any) => a.itemId === item.id)).to.deep.equal([]);
  });

  it('When the worker is killed mid-delivery, then nothing is lost: the delivery stays pending and is delivered after the sweep', async () => {
    const services = app.services;
    await workers.close();
    // Only the consumers run now, plus a webhook worker we can kill.
    const connection = createRedis(services.config, 'worker');
    const consumers: Worker[] = [
      startWorker(services, connection, 'analytics', PROCESSORS.analytics),
      startWorker(services, connection, 'low-stock-alerts', PROCESSORS['low-stock-alerts']),
    ];
    const killable = startWorker(services, connection, 'webhooks', PROCESSORS.webhooks);
    try {
      receiver.state.hang = true;
      const before = receiver.received.length;
      const em = services.orm.em.fork();
      const supplier = await createSupplier(em);
      const item = await createItem(em, { supplierId: supplier.id, price: '3.00', minimumQuantity: 5 });
      await recordStockChange(em, { itemId: item.id, change: 1, reason: 'INITIAL_STOCK', at: new Date() });
      await settleConsumers(services);
      await waitFor(async () => receiver.received.length > before, 10000, 'the first delivery attempt');
      await killable.close(true); // the job in flight is abandoned, as with kill -9
      expect((await deliveriesFor(item.id))[0].status).to.equal('pending');

      receiver.state.hang = false;
      receiver.state.failures = 0;
      const restarted = startWorker(services, connection, 'webhooks', PROCESSORS.webhooks);
      consumers.push(restarted);
      await services.queues.add(
        'webhooks',
        'sweep',
        { olderThanMs: 0 },
        { jobId: `sweep-test-${Date.now()}` },
      );
      await waitFor(
        async () => (await deliveriesFor(item.id))[0]?.status === 'delivered',
        20000,
        'redelivery',
      );
      expect(await deliveriesFor(item.id)).to.have.length(1);
      expect(await alertsFor(item.id)).to.have.length(1);
    } finally {
      await Promise.all(consumers.map(w => w.close()));
      await connection.quit();
      workers = startWorkers(services, { clock: false });
    }
  });
  it('When one batch holds two crossings of an item (down, up, down), then two alerts open and two webhooks are delivered', async () => {
    const em = app.services.orm.em.fork();
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id, price: '3.00', minimumQuantity: 5 });
    await inOneAlertsBatch(em, item.id, async () => {
      await recordStockChange(em, { itemId: item.id, change: 10, reason: 'INITIAL_STOCK', at: new Date() });
      await recordStockChange(em, { itemId: item.id, change: -6, reason: 'SALE', at: new Date() }); // 4: down
      await recordStockChange(em, { itemId: item.id, change: 3, reason: 'RESTOCK', at: new Date() }); // 7: up
      await recordStockChange(em, { itemId: item.id, change: -4, reason: 'SALE', at: new Date() }); // 3: down
    });
    await settleConsumers(app.services);

    const alerts = await alertsFor(item.id);
    expect(alerts.map(a => [a.quantity, a.closed_at === null])).to.deep.equal([
      [7, false],
      [3, true],
    ]);
    await waitFor(
      async () => (await deliveriesFor(item.id)).filter(d => d.status === 'delivered').length === 2,
      20000,
      'two delivered webhooks',
    );
    const deliveries = await deliveriesFor(item.id);
    expect(deliveries.map(d => String(d.alert_id))).to.deep.equal(alerts.map(a => String(a.id)));
    const bodies = receiver.received.map(r => JSON.parse(r.body)).filter(b => b.itemId === item.id);
    expect(new Set(bodies.map(b => b.alertId))).to.deep.equal(new Set(alerts.map(a => String(a.id))));
    expect(bodies.map(b => b.quantity).sort()).to.deep.equal([3, 4]);
  });
  it('When one batch closes an alert opened by an earlier batch and the item crosses down again, then the old alert closes and a new one opens', async () => {
    const em = app.services.orm.em.fork();
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id, price: '3.00', minimumQuantity: 5 });
    await recordStockChange(em, { itemId: item.id, change: 10, reason: 'INITIAL_STOCK', at: new Date() });
    await recordStockChange(em, { itemId: item.id, change: -7, reason: 'SALE', at: new Date() }); // 3: down
    await settleConsumers(app.services);
    expect((await alertsFor(item.id)).map(a => a.closed_at === null)).to.deep.equal([true]);
    // Up and down again in ONE batch: the open alert's close and the new alert's insert meet in one write (the
    // item may have one open alert only).
    await inOneAlertsBatch(em, item.id, async () => {
      await recordStockChange(em, { itemId: item.id, change: 5, reason: 'RESTOCK', at: new Date() }); // 8: up
      await recordStockChange(em, { itemId: item.id, change: -6, reason: 'SALE', at: new Date() }); // 2: down
    });
    await settleConsumers(app.services);

    const alerts = await alertsFor(item.id);
    expect(alerts.map(a => [a.quantity, a.closed_at === null])).to.deep.equal([
      [8, false],
      [2, true],
    ]);
  });
});
