import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { WorkerProcess } from '../support/processes.js';
import { waitFor } from '../support/wait-for.js';
import { waitForHistorySettled } from '../support/settle.js';
import { assertChain } from '../support/history.js';
import {
  csvFile,
  drainStockEvents,
  finishedImport,
  startImport,
  type ImportStatusBody,
} from '../support/csv.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { nativePool } from '../../domain/shared/native-transaction.js';
import { scaled } from '../support/machine-time.js';

const uid = () => randomUUID().slice(0, 8);
const HEADER = ['name', 'sku', 'quantity', 'price', 'supplierName', 'minimumQuantity'];
const ITEMS = '/api/inventory/import';

/** Issue 27.7: import states, cancellation, concurrent imports, SIGTERM, and API writes during an apply. */
describe('CSV import jobs: cancel, concurrent imports, SIGTERM hand-back, writes during the apply', function () {
  this.timeout(240000);
  let admin: TestUser;
  let user: TestUser;
  let supplier: { id: string; name: string };

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    supplier = await newSupplier(api(), admin.auth);
  });
  // Leave idle consumers to the next suite: the imports here wrote some 10^5 events.
  after(async function () {
    this.timeout(360000);
    const draining = startWorkers(testApp().services, { clock: false });
    try {
      await drainStockEvents(testApp().services, 300000);
    } finally {
      await draining.close();
    }
  });

  const status = async (base: string, jobId: string) =>
    (await api().get(`${base}/${jobId}`).set('Authorization', admin.auth).expect(200))
      .body as ImportStatusBody;
  const count = async (like: string) => {
    const [row] = await testApp()
      .services.orm.em.fork()
      .execute<{ n: string }[]>('select count(*) as n from inventory_item where name like ?', [like]);
    return Number(row.n);
  };
  const bigFile = (prefix: string, rows: number) =>
    csvFile(
      HEADER,
      Array.from({ length: rows }, (_, i) => [`${prefix} ${i}`, '', 2, '1.25', supplier.name, 0]),
    );

  describe('with workers in this process', () => {
    let workers: RunningWorkers[] = [];
    afterEach(async () => {
      await Promise.all(workers.map(w => w.close()));
      workers = [];
    });

    it('When queued imports (items, products) are cancelled, then 202 and cancelled, nothing is applied, and a second DELETE or one of a finished import is 409', async () => {
      const prefix = `Queued ${uid()}`;
      const jobId = await startImport(api(), admin.auth, `${ITEMS}?dryRun=false`, bigFile(prefix, 10));
      const products = await startImport(
        api(),
        admin.auth,
        '/api/products/import?dryRun=false',
        csvFile(['name', 'quantity', 'price'], [[`${prefix} product`, 1, '1.00']]),
      );
      const res = await api().delete(`${ITEMS}/${jobId}`).set('Authorization', admin.auth).expect(202);
      expect(res.body).to.deep.equal({ jobId, state: 'cancelled' });
      await api().delete(`${ITEMS}/${products}`).set('Authorization', admin.auth).expect(404);
      await api().delete(`/api/products/import/${products}`).set('Authorization', admin.auth).expect(202);
      await api().delete(`/api/products/import/${products}`).set('Authorization', admin.auth).expect(409);
      await api().delete(`${ITEMS}/${jobId}`).set('Authorization', user.auth).expect(403);

      workers.push(startWorkers(testApp().services, { clock: false }));
      // The worker takes both jobs and leaves them cancelled.
      const done = await startImport(api(), admin.auth, `${ITEMS}?dryRun=true`, bigFile(`${prefix} dry`, 1));
      await finishedImport(api(), admin.auth, `${ITEMS}/${done}`);
      expect((await status(ITEMS, jobId)).state).to.equal('cancelled');
      expect((await status('/api/products/import', products)).state).to.equal('cancelled');
      expect(await count(`${prefix} %`)).to.equal(0);
      const conflict = await api().delete(`${ITEMS}/${done}`).set('Authorization', admin.auth).expect(409);
      expect(conflict.body).to.include({ error: 'conflict', messageKey: 'csv.import.not.cancellable' });
    });

    it('When a running import is cancelled, then it ends cancelled and nothing of it is applied', async function () {
      const prefix = `Running ${uid()}`;
      workers.push(startWorkers(testApp().services, { clock: false }));
      const jobId = await startImport(api(), admin.auth, `${ITEMS}?dryRun=false`, bigFile(prefix, 40000));
      await waitFor(
        async () => (await status(ITEMS, jobId)).state === 'running',
        60000,
        'the import running',
      );
      const res = await api().delete(`${ITEMS}/${jobId}`).set('Authorization', admin.auth);
      // It may have reached its apply already (409); otherwise nothing of it is ever applied.
      if (res.status === 409) this.skip();
      expect(res.status).to.equal(202);
      await waitFor(
        async () => (await testApp().services.queues.queue('imports').getJobCounts('active')).active === 0,
        60000,
        'the run to stop',
      );
      expect((await status(ITEMS, jobId)).state).to.equal('cancelled');
      expect(await count(`${prefix} %`)).to.equal(0);
    });

    it('When two imports count the same items in opposite orders at once, then both complete and every chain holds', async () => {
      const own = await newSupplier(api(), admin.auth);
      const items: { id: string; name: string }[] = [];
      for (let i = 0; i < 40; i++) items.push(await newItem(api(), admin.auth, own.id, { quantity: 10 }));
      const rows = (quantity: number) => items.map(i => [i.name, '', quantity, '2.00', own.name, 0]);
      workers.push(startWorkers(testApp().services, { clock: false }));
      workers.push(startWorkers(testApp().services, { clock: false, relay: false }));
      const [a, b] = await Promise.all([
        startImport(api(), admin.auth, `${ITEMS}?dryRun=false`, csvFile(HEADER, rows(20))),
        startImport(api(), admin.auth, `${ITEMS}?dryRun=false`, csvFile(HEADER, rows(30).reverse())),
      ]);
      const [first, second] = await Promise.all([
        finishedImport(api(), admin.auth, `${ITEMS}/${a}`, 60000),
        finishedImport(api(), admin.auth, `${ITEMS}/${b}`, 60000),
      ]);
      for (const s of [first, second]) expect(s).to.deep.include({ state: 'completed' });
      expect(first.report?.applied && second.report?.applied).to.equal(true);
      await waitForHistorySettled(testApp().services, 60000);
      const finals = new Set<number>();
      for (const item of items) {
        const chain = await assertChain(testApp().services, item.id);
        finals.add(chain.at(-1)!.quantity_after);
      }
      expect(finals.size).to.equal(1);
      expect([20, 30]).to.include([...finals][0]);
    });

    it('When an item of a running import is adjusted, then the adjust answers at once, during the apply within 3 s (200 or 503), and other items are not held', async () => {
      const own = await newSupplier(api(), admin.auth);
      const hot = await newItem(api(), admin.auth, own.id, { quantity: 100 });
      const other = await newItem(api(), admin.auth, own.id, { quantity: 100 });
      const prefix = `Held ${uid()}`;
      const rows: (string | number)[][] = [[hot.name, '', 50, '2.50', own.name, 0]];
      for (let i = 0; i < 30000; i++) rows.push([`${prefix} ${i}`, '', 1, '1.00', own.name, 0]);
      workers.push(startWorkers(testApp().services, { clock: false }));
      const jobId = await startImport(api(), admin.auth, `${ITEMS}?dryRun=false`, csvFile(HEADER, rows));
      const timings: { state: string; status: number; ms: number; retryAfter?: string }[] = [];
      for (;;) {
        const state = (await status(ITEMS, jobId)).state;
        if (state === 'completed' || state === 'failed') break;
        for (const item of [hot, other]) {
          const started = performance.now();
          const res = await api()
            .patch(`/api/inventory/${item.id}/quantity?delta=1&reason=RESTOCK`)
            .set('Authorization', user.auth);
          timings.push({
            state,
            status: res.status,
            ms: performance.now() - started,
            retryAfter: res.headers['retry-after'],
          });
        }
      }
      expect(timings.length).to.be.greaterThan(0);
      for (const t of timings) {
        expect(t.ms, JSON.stringify(t)).to.be.below(3000);
        expect([200, 503], JSON.stringify(t)).to.include(t.status);
        if (t.status === 503) expect(t.retryAfter).to.be.a('string');
      }
      const final = await status(ITEMS, jobId);
      expect(final.report?.applied).to.equal(true);
      await waitForHistorySettled(testApp().services, 60000);
      const chain = await assertChain(testApp().services, hot.id);
      const accepted = timings.filter((t, i) => i % 2 === 0 && t.status === 200).length;
      expect(chain.filter(r => r.change === 1)).to.have.length(accepted);
    });
  });

  it('When the worker gets SIGTERM mid-import, then it hands the job back at once and another worker completes it', async () => {
    const services = testApp().services;
    const prefix = `Sigterm ${uid()}`;
    const rows = 60000;
    const env = { REDIS_PREFIX: services.config.redisPrefix, REDIS_URL: services.config.redisUrl };
    const first = new WorkerProcess(env);
    const second = new WorkerProcess(env);
    await first.start();
    try {
      const jobId = await startImport(api(), admin.auth, `${ITEMS}?dryRun=false`, bigFile(prefix, rows));
      await waitFor(
        async () => {
          const s = await status(ITEMS, jobId);
          return s.state === 'running' && s.progress.rowsRead > 0;
        },
        60000,
        'the import under way',
      );
      const stopped = performance.now();
      await first.stop();
      // Handed back: waiting again, not active until stall detection.
      const job = await services.queues.queue('imports').getJob(jobId);
      expect(await job!.getState()).to.equal('waiting');
      expect((await status(ITEMS, jobId)).state).to.equal('queued');
      expect(performance.now() - stopped).to.be.below(scaled(10000));
      await second.start();
      const done = await finishedImport(api(), admin.auth, `${ITEMS}/${jobId}`, 120000);
      expect(done.report).to.deep.include({ created: rows, applied: true });
      expect(await count(`${prefix} %`)).to.equal(rows);
    } finally {
      await first.kill();
      await second.stop();
    }
  });

  it('When the worker gets SIGTERM while an import is applying, then the apply rolls back and the job is handed back at once', async () => {
    const services = testApp().services;
    const own = await newSupplier(api(), admin.auth);
    const hot = await newItem(api(), admin.auth, own.id, { quantity: 7 });
    const prefix = `Applying ${uid()}`;
    const rows: (string | number)[][] = [[hot.name, '', 50, '2.50', own.name, 0]];
    for (let i = 0; i < 200; i++) rows.push([`${prefix} ${i}`, '', 1, '1.00', own.name, 0]);
    const env = { REDIS_PREFIX: services.config.redisPrefix, REDIS_URL: services.config.redisUrl };
    const first = new WorkerProcess(env);
    const second = new WorkerProcess(env);
    // Another transaction holds the row the import updates: the apply waits on it (its lock timeout is 20 s).
    const holder = await (await nativePool(services.orm.em.fork())).connect();
    await holder.query('begin');
    await holder.query('select 1 from inventory_item where id = $1 for update', [hot.id]);
    let held = true;
    await first.start();
    try {
      const jobId = await startImport(api(), admin.auth, `${ITEMS}?dryRun=false`, csvFile(HEADER, rows));
      await waitFor(
        async () => (await status(ITEMS, jobId)).state === 'applying',
        60000,
        'the apply under way',
      );
      const { code, ms } = await first.terminate();
      expect(code).to.equal(0);
      // Handed back before the apply's own lock wait could have ended: rolled back, waiting, queued.
      expect(ms).to.be.below(15000);
      const job = await services.queues.queue('imports').getJob(jobId);
      expect(await job!.getState()).to.equal('waiting');
      expect((await status(ITEMS, jobId)).state).to.equal('queued');
      expect(await count(`${prefix} %`)).to.equal(0);
      await holder.query('rollback');
      held = false;
      await second.start();
      const done = await finishedImport(api(), admin.auth, `${ITEMS}/${jobId}`, 120000);
      expect(done.report).to.deep.include({ created: rows.length - 1, updated: 1, applied: true });
      expect(await count(`${prefix} %`)).to.equal(rows.length - 1);
    } finally {
      if (held) await holder.query('rollback');
      holder.release();
      await first.kill();
      await second.stop();
    }
  });
});
