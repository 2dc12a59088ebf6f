import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { parseCsv, drainStockEvents } from '../support/csv.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const uid = () => randomUUID().slice(0, 8);
const today = () => new Date().toISOString().slice(0, 10);

describe('CSV export (GET /api/inventory/export.csv, /api/stock-history/export.csv, /api/products/export.csv)', () => {
  let admin: TestUser;
  let user: TestUser;
  let supplier: { id: string; name: string };
  let workers: RunningWorkers;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    supplier = await newSupplier(api(), admin.auth, { name: `=cmd|' /C calc'!A0 ${uid()}` });
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => {
    await drainStockEvents(testApp().services);
    await workers.close();
  });

  it('When items are exported, then an RFC 4180 file with BOM, header, dated name, quoting and neutralised formulas', async () => {
    const tricky = `Widget, "deluxe"\nsecond line ${uid()}`;
    const a = await newItem(api(), admin.auth, supplier.id, {
      name: tricky,
      quantity: 3,
      price: 12.5,
      minimumQuantity: 5,
    });
    const b = await newItem(api(), admin.auth, supplier.id, {
      name: `@SUM(1) ${uid()}`,
      sku: `-SKU-${uid()}`,
    });
    const res = await api()
      .get(`/api/inventory/export.csv?supplierId=${supplier.id}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).to.equal(`attachment; filename="inventory-${today()}.csv"`);
    expect(
      res.text.startsWith(
        '\uFEFFid,name,sku,quantity,price,totalValue,supplierId,supplierName,minimumQuantity,createdAt,updatedAt,onOrderQuantity,reorderPoint,orderUpToQuantity\r\n',
      ),
    ).to.equal(true);
    expect(res.text).to.include(`"${tricky.replace(/"/g, '""')}"`);
    const rows = parseCsv(res.text);
    expect(rows.map(r => r.id).sort()).to.deep.equal([a.id, b.id].sort());
    const rowA = rows.find(r => r.id === a.id)!;
    expect(rowA).to.deep.include({
      name: tricky,
      quantity: '3',
      price: '12.5',
      totalValue: '37.5',
      minimumQuantity: '5',
    });
    expect(rowA.supplierName).to.equal(`'${supplier.name}`);
    const rowB = rows.find(r => r.id === b.id)!;
    expect(rowB.name.startsWith("'@SUM(1)")).to.equal(true);
    expect(rowB.sku.startsWith("'-SKU-")).to.equal(true);
  });

  it('When the search filters and ?delimiter=; are given, then only matching items, separated by semicolons', async () => {
    const low = await newItem(api(), admin.auth, supplier.id, {
      name: `Low; item ${uid()}`,
      quantity: 1,
      minimumQuantity: 10,
    });
    const res = await api()
      .get(
        `/api/inventory/export.csv?supplierId=${supplier.id}&belowMinimumOnly=true&name=${encodeURIComponent(low.name)}&delimiter=%3B`,
      )
      .set('Authorization', user.auth)
      .expect(200);
    expect(res.text.split('\r\n')[0]).to.equal(
      '\uFEFFid;name;sku;quantity;price;totalValue;supplierId;supplierName;minimumQuantity;createdAt;updatedAt;onOrderQuantity;reorderPoint;orderUpToQuantity',
    );
    const rows = parseCsv(res.text, ';');
    expect(rows.map(r => r.name)).to.deep.equal([low.name]);
    await api().get('/api/inventory/export.csv?delimiter=x').set('Authorization', user.auth).expect(400);
    const none = await api()
      .get('/api/inventory/export.csv?supplierId=not-a-uuid')
      .set('Authorization', user.auth)
      .expect(200);
    expect(parseCsv(none.text)).to.deep.equal([]);
    expect(none.text).to.match(/^\uFEFFid,name,/);
  });

  it('When the history is exported with filters, then a ledger oldest first with signed changes', async () => {
    const item = await newItem(api(), admin.auth, supplier.id, { quantity: 5, price: 2 });
    await api()
      .patch(`/api/inventory/${item.id}/quantity?delta=-2&reason=SALE`)
      .set('Authorization', user.auth)
      .expect(200);
    await waitForHistorySettled(testApp().services);
    const res = await api()
      .get(`/api/stock-history/export.csv?itemId=${item.id}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(res.headers['content-disposition']).to.equal(
      `attachment; filename="stock-history-${today()}.csv"`,
    );
    const rows = parseCsv(res.text);
    expect(
      rows.map(r => [r.reason, r.change, r.quantityBefore, r.quantityAfter, r.priceAtChange]),
    ).to.deep.equal([
      ['INITIAL_STOCK', '5', '0', '5', '2'],
      ['SALE', '-2', '5', '3', '2'],
    ]);
    expect(Object.keys(rows[0])).to.deep.equal([
      'timestamp',
      'itemId',
      'itemName',
      'supplierName',
      'change',
      'quantityBefore',
      'quantityAfter',
      'reason',
      'priceAtChange',
      'createdBy',
    ]);
    const sales = parseCsv(
      (
        await api()
          .get(`/api/stock-history/export.csv?itemId=${item.id}&reason=SALE`)
          .set('Authorization', user.auth)
          .expect(200)
      ).text,
    );
    expect(sales).to.have.length(1);
    await api().get('/api/stock-history/export.csv').expect(401);
    await api()
      .get('/api/stock-history/export.csv?startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z')
      .set('Authorization', user.auth)
      .expect(400);
  });

  it('When products are exported, then every product with both price spellings collapsed to one price column', async () => {
    const name = `+Product ${uid()}`;
    await api()
      .post('/api/products')
      .set('Authorization', admin.auth)
      .send({ name, quantity: 4, price: 9.99 })
      .expect(201);
    const res = await api().get('/api/products/export.csv').set('Authorization', user.auth).expect(200);
    expect(res.headers['content-disposition']).to.equal(`attachment; filename="products-${today()}.csv"`);
    const row = parseCsv(res.text).find(r => r.name === `'${name}`);
    expect(row).to.deep.include({ quantity: '4', price: '9.99', totalValue: '39.96' });
    const anonymous = await api().get('/api/products/export.csv').expect(401);
    expect(anonymous.body.success).to.equal(false);
  });
});
