import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser } from '../support/users.js';
import { newSupplier } from '../support/inventory.js';
import { csvFile, finishedImport, startImport } from '../support/csv.js';
import { startWorkers } from '../../workers/main.js';

describe('Import sweep: an import whose queued job Redis lost still runs', function () {
  this.timeout(60000);

  it('When the imports queue loses every job, then the sweep enqueues the stored import again and it completes', async () => {
    const services = testApp().services;
    const admin = await createUser(services, 'ROLE_ADMIN', 'admin');
    const supplier = await newSupplier(api(), admin.auth);
    const name = `Swept ${randomUUID().slice(0, 8)}`;
    const file = csvFile(['name', 'quantity', 'price', 'supplierName'], [[name, 2, '1.00', supplier.name]]);
    // No worker runs yet: the job waits in Redis, then Redis "loses" it.
    const jobId = await startImport(api(), admin.auth, '/api/inventory/import?dryRun=false', file);
    await services.queues.queue('imports').obliterate({ force: true });
    await services.orm.em
      .fork()
      .execute(`update csv_import set updated_at = now() - interval '1 hour' where public_id = ?`, [jobId]);

    const workers = startWorkers(services, { clock: false, relay: false });
    try {
      await services.queues.add('imports', 'sweep', {}, { jobId: `test-sweep-${Date.now()}` });
      const status = await finishedImport(api(), admin.auth, `/api/inventory/import/${jobId}`);
      expect(status.report).to.deep.include({ created: 1, applied: true });
    } finally {
      await workers.close();
    }
  });
});
