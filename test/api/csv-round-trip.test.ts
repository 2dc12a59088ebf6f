import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { drainStockEvents, runImport } from '../support/csv.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const uid = () => randomUUID().slice(0, 8);

/** Names that start with `'`, followed by every character an export escapes, by `'` and by plain text. */
const apostropheNames = () =>
  ['=', '+', '-', '@', '\t', '\r', "'", "''=", 'x'].map(next => `'${next}RT apostrophe ${uid()}`);

describe('Export -> import round trip of cells that begin with an apostrophe (issue 27.5)', function () {
  this.timeout(60000);
  let admin: TestUser;
  let workers: RunningWorkers;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => {
    await drainStockEvents(testApp().services);
    await workers.close();
  });

  it('When items named with a leading apostrophe are exported and imported back, then nothing is created or renamed', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const names = apostropheNames();
    const items = [];
    for (const name of names)
      items.push(await newItem(api(), admin.auth, supplier.id, { name, quantity: 2 }));
    const exported = await api()
      .get(`/api/inventory/export.csv?supplierId=${supplier.id}`)
      .set('Authorization', admin.auth)
      .expect(200);
    const status = await runImport(api(), admin.auth, '/api/inventory/import', exported.text);
    expect(status.report).to.deep.include({
      created: 0,
      updated: 0,
      unchanged: names.length,
      rejectedCount: 0,
    });
    const after = await api()
      .get(`/api/inventory/search?name=RT%20apostrophe&supplierId=${supplier.id}&size=100`)
      .set('Authorization', admin.auth)
      .expect(200);
    expect((after.body.content as { name: string }[]).map(i => i.name).sort()).to.deep.equal(
      [...names].sort(),
    );
    expect(items.map(i => i.name)).to.deep.equal(names);
  });

  it('When products named with a leading apostrophe are exported and imported back, then none is renamed or created', async () => {
    const names = apostropheNames();
    const ids: number[] = [];
    for (const name of names)
      ids.push(
        (
          await api()
            .post('/api/products')
            .set('Authorization', admin.auth)
            .send({ name, quantity: 1, price: 2.5, category: "'+cat" })
            .expect(201)
        ).body.id as number,
      );
    const exported = await api().get('/api/products/export.csv').set('Authorization', admin.auth).expect(200);
    const status = await runImport(api(), admin.auth, '/api/products/import', exported.text);
    expect(status.report).to.deep.include({ created: 0, updated: 0, rejectedCount: 0 });
    for (const [i, id] of ids.entries()) {
      const product = await api().get(`/api/products/${id}`).set('Authorization', admin.auth).expect(200);
      expect(product.body.data).to.deep.include({ name: names[i], category: "'+cat" });
    }
  });
});
