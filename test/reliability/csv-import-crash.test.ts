import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser } from '../support/users.js';
import { newSupplier } from '../support/inventory.js';
import { WorkerProcess } from '../support/processes.js';
import { waitFor } from '../support/wait-for.js';
import { waitForHistorySettled } from '../support/settle.js';
import { csvFile, drainStockEvents, finishedImport, startImport } from '../support/csv.js';

/** Enough rows that the run reports progress (every 10,000 rows) well before it ends. */
const ROWS = 40000;

describe('CSV import survives kill -9 of the worker process', function () {
  this.timeout(300000);

  it('When the worker is killed mid-import, then the job reruns to the same end state: every item once, one INITIAL_STOCK each', async () => {
    const services = testApp().services;
    const admin = await createUser(services, 'ROLE_ADMIN', 'admin');
    const supplier = await newSupplier(api(), admin.auth);
    const prefix = `Crash ${randomUUID().slice(0, 8)}`;
    const rows = Array.from({ length: ROWS }, (_, i) => [`${prefix} ${i}`, '', 3, '1.50', supplier.name, 1]);
    const file = csvFile(['name', 'sku', 'quantity', 'price', 'supplierName', 'minimumQuantity'], rows);
    const env = { REDIS_PREFIX: services.config.redisPrefix, REDIS_URL: services.config.redisUrl };
    const first = new WorkerProcess(env);
    await first.start();
    const second = new WorkerProcess(env);
    try {
      const jobId = await startImport(api(), admin.auth, '/api/inventory/import?dryRun=false', file);
      const statusUrl = `/api/inventory/import/${jobId}`;
      await waitFor(
        async () => {
          const res = await api().get(statusUrl).set('Authorization', admin.auth).expect(200);
          return res.body.progress.rowsRead >= 500 && res.body.state === 'running';
        },
        60000,
        'the import under way',
      );
      await first.kill();
      await second.start();
      const status = await finishedImport(api(), admin.auth, statusUrl, 120000);
      expect(status.state).to.equal('completed');
      expect(status.report).to.deep.include({ created: ROWS, updated: 0, rejectedCount: 0, applied: true });

      const em = services.orm.em.fork();
      const [run] = await em.execute<{ attempts: number }[]>(
        'select attempts from csv_import where public_id = ?',
        [jobId],
      );
      expect(run.attempts).to.be.greaterThan(1);
      await waitForHistorySettled(services, 60000);
      const [counts] = await em.execute<
        { items: string; entries: string; events: string; reasons: string }[]
      >(
        `select (select count(*) from inventory_item where name like ?) as items,
                (select count(*) from stock_history where item_name like ?) as entries,
                (select count(distinct outbox_event_id) from stock_history where item_name like ?) as events,
                (select string_agg(distinct reason, ',') from stock_history where item_name like ?) as reasons`,
        Array(4).fill(`${prefix} %`),
      );
      expect(counts).to.deep.equal({
        items: String(ROWS),
        entries: String(ROWS),
        events: String(ROWS),
        reasons: 'INITIAL_STOCK',
      });
      // Leave idle consumers to the next suite.
      await drainStockEvents(services, 150000);
    } finally {
      await first.kill();
      await second.stop();
    }
  });
});
