import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { apiClient, startTestApp, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const MISSING = '00000000-0000-4000-8000-000000000000';

describe('Suppliers (S1-S7)', () => {
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
  });

  it('When an admin creates a supplier, then 201 with Location; createdBy is the caller; unknown fields ignored', async () => {
    const res = await api()
      .post('/api/suppliers')
      .set('Authorization', admin.auth)
      .send({
        name: '  Acme Parts  ',
        contactName: 'Ann',
        phone: '+49 1',
        email: 'ann@acme.test',
        createdBy: 'x',
        extra: 1,
      })
      .expect(201);
    expect(res.headers.location).to.equal(`/api/suppliers/${res.body.id}`);
    expect(res.body).to.include({
      name: 'Acme Parts',
      contactName: 'Ann',
      email: 'ann@acme.test',
      createdBy: `${admin.username}@example.test`,
    });
    const one = await api().get(`/api/suppliers/${res.body.id}`).set('Authorization', user.auth).expect(200);
    expect(one.body).to.deep.equal(res.body);
  });

  it('When input is invalid, then 400 (validation before id) -> 409 duplicate; roles 401/403', async () => {
    const missingName = await api()
      .post('/api/suppliers')
      .set('Authorization', admin.auth)
      .send({ email: 'a@b.test', id: 'x' })
      .expect(400);
    expect(missingName.body.fieldErrors.name).to.equal('Supplier name is required');
    const email = await api()
      .post('/api/suppliers')
      .set('Authorization', admin.auth)
      .send({ name: 'E1', email: 'nope' })
      .expect(400);
    expect(email.body.fieldErrors.email).to.equal('Invalid email address');
    await api()
      .post('/api/suppliers')
      .set('Authorization', admin.auth)
      .send({ name: 'With id', id: 'abc' })
      .expect(400);
    const s = await newSupplier(api(), admin.auth);
    const dup = await api()
      .post('/api/suppliers')
      .set('Authorization', admin.auth)
      .send({ name: s.name.toUpperCase() })
      .expect(409);
    expect(dup.body.error).to.equal('DUPLICATE_RESOURCE');
    await api().post('/api/suppliers').send({ name: 'anon' }).expect(401);
    await api().post('/api/suppliers').set('Authorization', user.auth).send({ name: 'user' }).expect(403);
    await api().get(`/api/suppliers/${s.id}`).expect(401);
    await api().get(`/api/suppliers/${MISSING}`).set('Authorization', user.auth).expect(404);
  });

  it('When updating, then 400 id mismatch -> 404 -> 409 duplicate -> 200', async () => {
    const a = await newSupplier(api(), admin.auth);
    const b = await newSupplier(api(), admin.auth);
    const body = { name: 'Renamed supplier', contactName: null, phone: null, email: null };
    await api()
      .put(`/api/suppliers/${a.id}`)
      .set('Authorization', admin.auth)
      .send({ ...body, id: b.id })
      .expect(400);
    await api().put(`/api/suppliers/${MISSING}`).set('Authorization', admin.auth).send(body).expect(404);
    await api()
      .put(`/api/suppliers/${a.id}`)
      .set('Authorization', admin.auth)
      .send({ ...body, name: b.name })
      .expect(409);
    const ok = await api()
      .put(`/api/suppliers/${a.id}`)
      .set('Authorization', admin.auth)
      .send({ ...body, id: a.id })
      .expect(200);
    expect(ok.body).to.include({ id: a.id, name: 'Renamed supplier', email: null });
    // The answer carries the stored row; the update keeps the creation time PostgreSQL's clock stamped.
    const stored = await api().get(`/api/suppliers/${a.id}`).set('Authorization', user.auth).expect(200);
    expect(stored.body).to.deep.equal(ok.body);
    expect(ok.body.createdAt)
      .to.equal(a.createdAt)
      .and.to.match(/^\d{4}-\d{2}-\d{2}T/);
    await api().put(`/api/suppliers/${a.id}`).set('Authorization', user.auth).send(body).expect(403);
  });

  it('When deleting, then 404 -> 409 while items reference it -> 204', async () => {
    await api().delete(`/api/suppliers/${MISSING}`).set('Authorization', admin.auth).expect(404);
    const s = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, s.id, { quantity: 0 });
    const used = await api().delete(`/api/suppliers/${s.id}`).set('Authorization', admin.auth).expect(409);
    expect(used.body.error).to.equal('conflict');
    await api().delete(`/api/inventory/${item.id}?reason=LOST`).set('Authorization', admin.auth).expect(204);
    await api().delete(`/api/suppliers/${s.id}`).set('Authorization', user.auth).expect(403);
    await api().delete(`/api/suppliers/${s.id}`).set('Authorization', admin.auth).expect(204);
    await api().get(`/api/suppliers/${s.id}`).set('Authorization', admin.auth).expect(404);
  });

  it('When listing, then a plain array (sort, limit) or a Spring page with size; count and search', async () => {
    await newSupplier(api(), admin.auth, { name: 'Zulu Search Co' });
    await newSupplier(api(), admin.auth, { name: 'Alpha Search Co' });
    const all = await api().get('/api/suppliers').set('Authorization', user.auth).expect(200);
    expect(all.body).to.be.an('array');
    const names = all.body.map((s: { name: string }) => s.name.toLowerCase());
    expect(names).to.deep.equal([...names].sort());
    const limited = await api()
      .get('/api/suppliers?limit=1&sort=name,desc')
      .set('Authorization', user.auth)
      .expect(200);
    expect(limited.body).to.have.length(1);
    const page = await api().get('/api/suppliers?size=1&page=0').set('Authorization', user.auth).expect(200);
    expect(page.body).to.include({ size: 1, number: 0, totalElements: all.body.length });
    const bad = await api().get('/api/suppliers?size=201').set('Authorization', user.auth).expect(400);
    expect(bad.body.message).to.equal('page size must be between 1 and 200');
    await api().get('/api/suppliers?sort=phone').set('Authorization', user.auth).expect(400);
    const count = await api().get('/api/suppliers/count').set('Authorization', user.auth).expect(200);
    expect(count.body).to.equal(all.body.length);
    const found = await api()
      .get('/api/suppliers/search?name=search%20co')
      .set('Authorization', user.auth)
      .expect(200);
    expect(found.body.map((s: { name: string }) => s.name)).to.deep.equal([
      'Alpha Search Co',
      'Zulu Search Co',
    ]);
    await api().get('/api/suppliers/search').set('Authorization', user.auth).expect(400);
  });
});

describe('Stock history (H1-H4)', () => {
  let admin: TestUser;
  let user: TestUser;
  let workers: RunningWorkers;
  let supplierId: string;
  let itemId: string;
  let itemName: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    workers = startWorkers(testApp().services, { clock: false });
    supplierId = (await newSupplier(api(), admin.auth)).id;
    const item = await newItem(api(), admin.auth, supplierId, {
      name: `History Probe ${Date.now()}`,
      quantity: 5,
    });
    itemId = item.id;
    itemName = item.name;
    await api()
      .patch(`/api/inventory/${itemId}/quantity?delta=-2&reason=SALE`)
      .set('Authorization', user.auth)
      .expect(200);
    await api()
      .patch(`/api/inventory/${itemId}/quantity?delta=3&reason=RESTOCK`)
      .set('Authorization', user.auth)
      .expect(200);
    await waitForHistorySettled(testApp().services);
  });
  after(async () => workers.close());

  it('When listing, then newest first, or a Spring page with size; anonymous is 401', async () => {
    const all = await api().get('/api/stock-history').set('Authorization', user.auth).expect(200);
    const stamps = all.body.map((e: { timestamp: string }) => e.timestamp);
    expect(stamps).to.deep.equal([...stamps].sort().reverse());
    const page = await api()
      .get('/api/stock-history?size=2&sort=change,asc')
      .set('Authorization', user.auth)
      .expect(200);
    expect(page.body.content).to.have.length(2);
    expect(page.body.content[0].change).to.be.at.most(page.body.content[1].change);
    await api().get('/api/stock-history?size=0').set('Authorization', user.auth).expect(400);
    await api().get('/api/stock-history?size=5&sort=reason').set('Authorization', user.auth).expect(400);
    await api().get('/api/stock-history').expect(401);
  });

  it('When reading by item and by reason, then newest-first arrays; unknown reasons 400; aliases accepted', async () => {
    const byItem = await api()
      .get(`/api/stock-history/item/${itemId}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(byItem.body.map((e: { reason: string }) => e.reason)).to.deep.equal([
      'RESTOCK',
      'SALE',
      'INITIAL_STOCK',
    ]);
    expect(byItem.body[1]).to.include({
      itemId,
      itemName,
      supplierId,
      change: -2,
      quantityBefore: 5,
      quantityAfter: 3,
      priceAtChange: 2.5,
    });
    const sale = await api()
      .get('/api/stock-history/reason/SALE')
      .set('Authorization', user.auth)
      .expect(200);
    expect(sale.body.every((e: { reason: string }) => e.reason === 'SALE')).to.equal(true);
    const alias = await api()
      .get('/api/stock-history/reason/SOLD')
      .set('Authorization', user.auth)
      .expect(200);
    expect(alias.body.length).to.equal(sale.body.length);
    await api().get('/api/stock-history/reason/sale').set('Authorization', user.auth).expect(400);
    await api().get(`/api/stock-history/item/${MISSING}`).set('Authorization', user.auth).expect(200);
  });

  it('When searching, then inclusive dates, item name, supplier, search page; endDate < startDate is 400', async () => {
    const start = new Date(Date.now() - 60000).toISOString();
    const end = new Date(Date.now() + 60000).toISOString();
    const res = await api()
      .get(
        `/api/stock-history/search?startDate=${start}&endDate=${end}&itemName=${encodeURIComponent(itemName.slice(0, 12).toLowerCase())}&supplierId=${supplierId}`,
      )
      .set('Authorization', user.auth)
      .expect(200);
    expect(res.body.page).to.include({ size: 50, totalElements: 3 });
    expect(res.body.content.map((e: { reason: string }) => e.reason)).to.deep.equal([
      'RESTOCK',
      'SALE',
      'INITIAL_STOCK',
    ]);
    const future = await api()
      .get(`/api/stock-history/search?startDate=${end}&itemName=${encodeURIComponent(itemName)}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(future.body.empty).to.equal(true);
    const inverted = await api()
      .get(`/api/stock-history/search?startDate=${end}&endDate=${start}`)
      .set('Authorization', user.auth)
      .expect(400);
    expect(inverted.body.error).to.equal('bad_request');
    await api().get('/api/stock-history/search?size=201').set('Authorization', user.auth).expect(400);
    await api()
      .get('/api/stock-history/search?sort=itemId,asc&sort=change,desc')
      .set('Authorization', user.auth)
      .expect(200);
    await api()
      .get('/api/stock-history/search?startDate=yesterday')
      .set('Authorization', user.auth)
      .expect(400);
  });

  it('When someone tries to rewrite history, then the database refuses', async () => {
    const em = testApp().services.orm.em.fork();
    let failed = false;
    try {
      await em.execute('update stock_history set change = 0 where item_id = ?', [itemId]);
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
  });
});

describe('Demo read-only mode (inventory, suppliers, history)', () => {
  let demo: TestApp;
  let admin: TestUser;
  let itemId: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    const supplier = await newSupplier(api(), admin.auth);
    itemId = (await newItem(api(), admin.auth, supplier.id)).id;
    demo = await startTestApp({ APP_DEMO_READONLY: 'true' }, { migrate: false });
  });
  after(async () => demo.close());

  it('When demo mode is on, then demo reads are public, other reads need auth, every write is 403', async () => {
    const client = apiClient(demo);
    for (const url of [
      '/api/inventory',
      '/api/inventory/count',
      `/api/inventory/${itemId}`,
      '/api/inventory/search?name=',
      '/api/items',
      '/api/suppliers',
      '/api/suppliers/count',
      '/api/suppliers/search?name=a',
    ])
      await client.get(url).expect(200);
    await client.get('/api/stock-history').expect(401);
    await client.get(`/api/suppliers/${MISSING}`).expect(401);
    const writes = [
      client.post('/api/inventory').send({ name: 'x', quantity: 1, price: 1, supplierId: MISSING }),
      client.put(`/api/inventory/${itemId}`).send({}),
      client.delete(`/api/inventory/${itemId}?reason=LOST`),
      client.patch(`/api/inventory/${itemId}/quantity?delta=1&reason=SALE`),
      client.patch(`/api/inventory/${itemId}/price?price=1`),
      client.patch(`/api/inventory/${itemId}/name?name=x`),
      client.post('/api/suppliers').send({ name: 'x' }),
      client.put(`/api/suppliers/${MISSING}`).send({ name: 'x' }),
      client.delete(`/api/suppliers/${MISSING}`),
    ];
    for (const write of writes) {
      const res = await write.set('Authorization', admin.auth).expect(403);
      expect(res.body.error).to.equal('forbidden');
    }
  });
});
