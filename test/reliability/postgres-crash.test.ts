import { expect } from 'chai';
import { withTimeout } from '../../domain/shared/with-timeout.js';
import { createDatabases } from '../../scripts/create-databases.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { TestPostgres } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait-for.js';

interface Result {
  itemId: string;
  started: number;
  ms: number;
  status: number;
  correlationId?: string;
  body: Record<string, unknown>;
}

const WRITE_EVERY_MS = 20; // 50 writes/s
const OUTAGE_MS = 3000;
const START_QUANTITY = 1000;

/**
 * R9: the app and its workers on a test-owned PostgreSQL cluster, which is crashed (`pg_ctl stop -m immediate`)
 * while 50 writes/s arrive and restarted a few seconds later. Nothing acknowledged is lost, the outage answers
 * 503 fast, the app recovers by itself and the outbox consumers catch up.
 */
describe('PostgreSQL crash during writes (R9, test-owned cluster)', function () {
  this.timeout(120000);
  let pgServer: TestPostgres;
  let app: TestApp;
  let client: ApiClient;
  let workers: RunningWorkers;
  let admin: TestUser;
  let user: TestUser;

  before(async function () {
    this.timeout(120000);
    pgServer = new TestPostgres(await freePort());
    await pgServer.init();
    await pgServer.start();
    await createDatabases(pgServer.url);
    app = await startTestApp({ DATABASE_URL: pgServer.url, OUTBOX_SWEEP_INTERVAL_MS: '200' });
    client = apiClient(app);
    app.services.probe.start();
    admin = await createUser(app.services, 'ROLE_ADMIN', 'admin');
    user = await createUser(app.services, 'ROLE_USER');
    workers = startWorkers(app.services, { clock: false });
  });
  after(async function () {
    this.timeout(60000);
    try {
      await workers?.close();
      // Bounded: a pool that lost connections to the crash would wait for them for ever.
      if (app) await withTimeout(app.close(), 15000, () => new Error('the app did not close within 15 s'));
    } finally {
      await pgServer?.destroy();
    }
  });

  it('When PostgreSQL crashes and restarts during 50 writes/s, then 0 acknowledged writes lost, 503s within 5 s, 2xx again within 5 s, history complete', async () => {
    const supplier = await newSupplier(client, admin.auth);
    const items: string[] = [];
    for (let i = 0; i < 5; i += 1)
      items.push((await newItem(client, admin.auth, supplier.id, { quantity: START_QUANTITY })).id);

    const results: Result[] = [];
    const inFlight = new Set<Promise<void>>();
    let sent = 0;
    const fire = () => {
      const itemId = items[sent++ % items.length];
      const started = Date.now();
      const request = client
        .patch(`/api/inventory/${itemId}/quantity?delta=1&reason=RESTOCK`)
        .set('Authorization', user.auth)
        .timeout(15000)
        .then(
          res =>
            void results.push({
              itemId,
              started,
              ms: Date.now() - started,
              status: res.status,
              correlationId: res.headers['x-correlation-id'],
              body: res.body as Record<string, unknown>,
            }),
          (error: Error) =>
            void results.push({
              itemId,
              started,
              ms: Date.now() - started,
              status: 0,
              body: { error: error.message },
            }),
        );
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    };
    const ticker = setInterval(fire, WRITE_EVERY_MS);
    try {
      await waitFor(
        () => results.filter(r => r.status === 200).length >= 50,
        20000,
        '50 writes before the crash',
      );

      await pgServer.stop('immediate');
      const crashedAt = Date.now();
      const health = await client.get('/api/health/db');
      expect(health.status).to.equal(503);
      expect(health.body).to.deep.equal({ status: 'DOWN' });
      // The outage lasts a few seconds of the chaos schedule (not a wait for a worker).
      await new Promise(resolve => setTimeout(resolve, OUTAGE_MS - (Date.now() - crashedAt)));

      await pgServer.start();
      const acceptingAt = Date.now();
      const firstOk = await waitFor(
        () => results.find(r => r.status === 200 && r.started >= acceptingAt),
        10000,
        'a 2xx after PostgreSQL accepts connections again',
      );
      const recoveredMs = firstOk!.started + firstOk!.ms - acceptingAt;
      await waitFor(
        () => results.filter(r => r.status === 200 && r.started > firstOk!.started).length >= 50,
        20000,
        '50 writes after the recovery',
      );
      clearInterval(ticker);
      await Promise.all([...inFlight]);

      const outage = results.filter(r => r.status !== 200);
      console.log(
        `      ${results.length} writes: ${results.length - outage.length} x 200, ${outage.length} x 503 ` +
          `(slowest ${Math.max(0, ...outage.map(r => r.ms))} ms); 2xx again ${recoveredMs} ms after PostgreSQL accepted connections`,
      );
      expect(outage.length, 'the outage was seen').to.be.greaterThan(0);
      expect(
        results
          .filter(r => r.status !== 200 && r.status !== 503)
          .map(r => `${r.status} ${JSON.stringify(r.body)}`),
      ).to.deep.equal([]);
      for (const r of outage) {
        expect(r.ms, 'a 503 within the pool acquire timeout').to.be.at.most(5500);
        expect(r.body).to.include({ error: 'service_unavailable', status: 503 });
        expect(r.body).to.have.keys([
          'error',
          'message',
          'status',
          'timestamp',
          'path',
          'correlationId',
          'messageKey',
        ]);
      }
      expect(recoveredMs, 'the app serves 2xx again within 5 s, without a restart').to.be.at.most(5000);
      expect((await client.get('/api/health/db').expect(200)).body.status).to.equal('UP');

      // Every acknowledged write is there (a 503 whose commit made it is allowed to be there too).
      const em = app.services.orm.em.fork();
      const events = await em.execute<{ aggregate_id: string; correlation_id: string }[]>(
        `select aggregate_id, payload->>'correlationId' as correlation_id from outbox_event
          where aggregate_id = any(string_to_array(?, ',')) and payload->>'reason' = 'RESTOCK'`,
        [items.join(',')],
      );
      const stored = new Set(events.map(e => e.correlation_id));
      const acknowledged = results.filter(r => r.status === 200);
      expect(acknowledged.filter(r => !stored.has(r.correlationId!)).map(r => r.correlationId)).to.deep.equal(
        [],
      );
      const quantities = await em.execute<{ id: string; quantity: number }[]>(
        'select id::text as id, quantity from inventory_item where id = any(?::uuid[])',
        [`{${items.join(',')}}`],
      );
      for (const { id, quantity } of quantities)
        expect(quantity, id).to.equal(START_QUANTITY + events.filter(e => e.aggregate_id === id).length);

      // The outbox consumers catch up: one history entry per event.
      await waitForHistorySettled(app.services, 20000);
      const [history] = await em.execute<{ rows: string; events: string }[]>(
        `select (select count(*) from stock_history where item_id = any(?::uuid[])) as rows,
                (select count(*) from outbox_event where aggregate_id = any(string_to_array(?, ','))) as events`,
        [`{${items.join(',')}}`, items.join(',')],
      );
      expect(Number(history.rows)).to.equal(Number(history.events));

      // No connection is lost to the crash: every pooled connection is back (idle) once the work is done.
      const pool = await app.services.orm.em.getConnection().getNativeClient();
      await waitFor(
        () => pool.totalCount === pool.idleCount,
        10000,
        'every pool connection back after the crash',
      ).catch((error: Error) => {
        throw new Error(
          `${error.message}: ${pool.totalCount - pool.idleCount} of ${pool.totalCount} still checked out`,
        );
      });
    } finally {
      clearInterval(ticker);
      await Promise.all([...inFlight]);
    }
  });
});
