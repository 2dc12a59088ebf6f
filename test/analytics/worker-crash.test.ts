import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { testEnv } from '../support/test-env.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { waitFor } from '../support/wait-for.js';
import { waitForItemConsumersDone } from '../support/settle.js';
import { publishEvents } from '../../domain/outbox/publish-events.js';
import { ALERTS_CONSUMER, ANALYTICS_CONSUMER } from '../../domain/outbox/consumers.js';
import { AnalyticsOracle } from '../support/analytics-oracle.js';
import { financialSummary } from '../../domain/analytics/queries/financial-summary.js';
import { monthlyStockMovement } from '../../domain/analytics/queries/monthly-stock-movement.js';

/** A worker process of its own (the Procfile's `worker` line), sharing the test's database and queue prefix. */
function spawnWorker(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'scripts/start-all.ts', '--worker'], {
    env,
    stdio: 'ignore',
  });
}

const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

describe('Analytics and alerts survive kill -9 of the worker process', function () {
  this.timeout(120000);
  let app: TestApp;
  let receiver: Server;
  let url: string;
  const hits = new Map<string, number>();
  const children: ChildProcess[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      const id = String(req.headers['x-stockroom-delivery']);
      hits.set(id, (hits.get(id) ?? 0) + 1);
      req.resume();
      // Slow answers widen the window in which a kill lands mid-delivery.
      setTimeout(() => res.writeHead(204).end(), 150);
    });
    await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
    app = await startTestApp(
      { LOW_STOCK_WEBHOOK_URL: url, WEBHOOK_SECRET: 'crash-test-secret-0123456789' },
      { migrate: false },
    );
  });

  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await app?.close();
    receiver?.closeAllConnections();
    await new Promise(resolve => receiver?.close(resolve));
  });

  it('When the worker is killed -9 twice while 300 events flow, then rollups equal the oracle and every crossing has one alert and one delivered webhook', async () => {
    const services = app.services;
    const env = {
      ...testEnv({ LOW_STOCK_WEBHOOK_URL: url, WEBHOOK_SECRET: 'crash-test-secret-0123456789' }),
      REDIS_PREFIX: services.config.redisPrefix,
    };
    const em = services.orm.em.fork();
    const supplier = await createSupplier(em);
    const items: { id: string; q: number }[] = [];
    for (let i = 0; i < 10; i++)
      items.push({ id: (await createItem(em, { supplierId: supplier.id, minimumQuantity: 5 })).id, q: 0 });

    children.push(spawnWorker(env));
    let t = Date.parse('2026-05-01T00:00:00Z');
    for (let n = 0; n < 300; n++) {
      const item = items[(n * 7) % items.length];
      const delta = item.q < 3 || n % 3 === 0 ? 4 : -3;
      item.q += delta;
      t += 17 * 60000;
      const id = await recordStockChange(em, {
        itemId: item.id,
        change: delta,
        reason: delta > 0 ? 'RESTOCK' : 'SALE',
        at: new Date(t),
      });
      await publishEvents(services.queues, [id], [ANALYTICS_CONSUMER, ALERTS_CONSUMER]);
      if (n === 100 || n === 200) {
        children.at(-1)?.kill('SIGKILL');
        await pause(100);
        children.push(spawnWorker(env));
      }
    }
    await waitForItemConsumersDone(
      em,
      items.map(i => i.id),
      60000,
      'the consumers after the kills',
    );
    // A delivery abandoned by a kill stays pending; the (hourly) sweep re-enqueues it.
    await services.queues.add(
      'webhooks',
      'sweep',
      { olderThanMs: 0 },
      { jobId: `crash-sweep-${Date.now()}` },
    );
    const deliveries = async () =>
      em.execute<{ id: string; status: string }[]>(
        `select d.id, d.status from webhook_delivery d join low_stock_alert a on a.id = d.alert_id
         where a.item_id in (${items.map(() => '?').join(',')})`,
        items.map(i => i.id),
      );
    await waitFor(async () => (await deliveries()).every(d => d.status === 'delivered'), 30000, 'deliveries');

    const oracle = await AnalyticsOracle.load(em);
    const range = { start: '2026-05-01', end: '2026-05-05' };
    expect(await financialSummary(em, range, supplier.id)).to.deep.equal(
      oracle.financial(range.start, range.end, supplier.id),
    );
    expect(await monthlyStockMovement(em, range, supplier.id)).to.deep.equal(
      oracle.monthlyMovement(range.start, range.end, supplier.id),
    );
    let crossings = 0;
    for (const item of items) {
      const rows = await em.execute<{ payload: any }[]>(
        'select payload from outbox_event where aggregate_id = ? order by id',
        [item.id],
      );
      let low = false;
      for (const { payload } of rows) {
        const now = payload.quantityAfter < payload.minimumQuantity;
        if (now && !low) crossings += 1;
        low = now;
      }
    }
    const list = await deliveries();
    expect(list).to.have.length(crossings);
    for (const d of list) expect(hits.get(String(d.id)) ?? 0, `delivery ${d.id}`).to.be.greaterThan(0);
  });
});
