import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { csvFile, runImport, drainStockEvents } from '../support/csv.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const uid = () => randomUUID().slice(0, 8);
const BASE = '/api/products/import';

describe('CSV import of products (POST /api/products/import)', function () {
  this.timeout(60000);
  let admin: TestUser;
  let user: TestUser;
  let workers: RunningWorkers;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => {
    await drainStockEvents(testApp().services);
    await workers.close();
  });

  const product = async (id: number) =>
    (await api().get(`/api/products/${id}`).set('Authorization', user.auth).expect(200)).body.data;

  it('When the product export is imported back, then nothing changes; a changed copy updates by sku and creates the new', async () => {
    const created = await api()
      .post('/api/products')
      .set('Authorization', admin.auth)
      .send({
        name: `-Minus ${uid()}`,
        quantity: 4,
        price: 9.99,
        category: 'Tools',
        description: 'a, "b"\nc',
      })
      .expect(201);
    const exported = await api().get('/api/products/export.csv').set('Authorization', admin.auth).expect(200);
    const same = await runImport(api(), admin.auth, BASE, exported.text);
    expect(same.report).to.deep.include({ created: 0, updated: 0, rejectedCount: 0, applied: true });
    expect((await product(created.body.id)).updatedAt).to.equal(created.body.updatedAt);

    const fresh = `Fresh ${uid()}`;
    const file = csvFile(
      ['sku', 'name', 'quantity', 'purchasePrice', 'category'],
      [
        [created.body.sku, created.body.name, 6, '10.50', 'Tools'],
        ['', fresh, 1, '2.00', ''],
      ],
    );
    const status = await runImport(api(), admin.auth, BASE, file);
    expect(status.report).to.deep.include({ created: 1, updated: 1, unchanged: 0, applied: true });
    expect(await product(created.body.id)).to.deep.include({
      quantity: 6,
      price: 10.5,
      description: 'a, "b"\nc',
    });
    const found = await api()
      .get(`/api/products/search?name=${encodeURIComponent(fresh)}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(found.body).to.have.length(1);
  });

  it('When a row breaks the product rules, then the product messages are reported with line and column and nothing is applied', async () => {
    const fine = `Fine ${uid()}`;
    const file = csvFile(
      ['name', 'quantity', 'price'],
      [
        [fine, 1, '1.00'],
        [`Neg ${uid()}`, -1, '1.00'],
        [`Price ${uid()}`, 1, 'abc'],
      ],
    );
    const status = await runImport(api(), admin.auth, BASE, file);
    expect(status.report!.rejected.map(r => [r.line, r.column, r.message])).to.deep.equal([
      [3, 'quantity', 'Quantity cannot be negative.'],
      [4, 'price', 'Price must be a valid number.'],
    ]);
    expect(status.report?.applied).to.equal(false);
    await api()
      .get(`/api/products/search?name=${encodeURIComponent(fine)}`)
      .set('Authorization', user.auth)
      .expect(204);
    const forbidden = await api()
      .post(BASE)
      .set('Authorization', user.auth)
      .set('Content-Type', 'text/csv')
      .send(file)
      .expect(403);
    expect(forbidden.body.success).to.equal(false);
  });
});
