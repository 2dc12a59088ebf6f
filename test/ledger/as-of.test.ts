import { expect } from 'chai';
import fc from 'fast-check';
import request from 'supertest';
import { api, testApp } from '../setup/hooks.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

interface HistoryRow {
  item_id: string;
  change: number;
  quantity_after: number;
  reason: string;
  price: string;
  micros: string;
  ts: string;
}

const cents = (text: string) => Math.round(Number(text) * 100);

/**
 * The brute-force replay: each item's state at an instant is its last history entry up to that millisecond
 * (entries in event order); a deletion entry (change 0, not a price change) ends the item.
 */
function replay(rows: HistoryRow[], itemIds: string[], atMs: number) {
  const bound = BigInt(atMs + 1) * 1000n;
  const state = new Map<string, { quantity: number; priceCents: number }>();
  for (const id of itemIds) {
    let last: HistoryRow | undefined;
    for (const r of rows) if (r.item_id === id && BigInt(r.micros) < bound) last = r;
    if (last && !(last.change === 0 && last.reason !== 'PRICE_CHANGE'))
      state.set(id, { quantity: last.quantity_after, priceCents: cents(last.price) });
  }
  return state;
}

const opArb = fc.oneof(
  fc.record({
    kind: fc.constant('adjust' as const),
    item: fc.nat(1),
    delta: fc.integer({ min: -6, max: 6 }),
  }),
  fc.record({
    kind: fc.constant('price' as const),
    item: fc.nat(1),
    cents: fc.integer({ min: 1, max: 5000 }),
  }),
  fc.record({
    kind: fc.constant('put' as const),
    item: fc.nat(1),
    quantity: fc.integer({ min: 0, max: 20 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), item: fc.nat(1) }),
);

describe('Ledger: point in time (asOf)', function () {
  this.timeout(300000);
  let admin: TestUser;
  let user: TestUser;
  let workers: RunningWorkers;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => workers.close());

  const itemAsOf = (id: string, at: string) =>
    api()
      .get(`/api/inventory/${id}?asOf=${encodeURIComponent(at)}`)
      .set('Authorization', user.auth);
  const valueAsOf = (supplierId: string, at: string) =>
    api()
      .get(`/api/inventory/value?asOf=${encodeURIComponent(at)}&supplierId=${supplierId}`)
      .set('Authorization', user.auth)
      .expect(200);

  it('When random histories are written, then asOf answers (item and value) equal a brute-force replay of the history at every entry, just before it and just after it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 2, maxLength: 8 }), async ops => {
        const supplierId = (await newSupplier(api(), admin.auth)).id;
        const items = [
          await newItem(api(), admin.auth, supplierId, { quantity: 5, price: 1.5 }),
          await newItem(api(), admin.auth, supplierId, { quantity: 3, price: 2 }),
        ];
        const live = [true, true];
        const quantity = [5, 3];
        for (const op of ops) {
          const item = items[op.item];
          if (!live[op.item]) continue;
          if (op.kind === 'adjust' && op.delta !== 0 && quantity[op.item] + op.delta >= 0) {
            await api()
              .patch(
                `/api/inventory/${item.id}/quantity?delta=${op.delta}&reason=${op.delta > 0 ? 'RESTOCK' : 'SALE'}`,
              )
              .set('Authorization', admin.auth)
              .expect(200);
            quantity[op.item] += op.delta;
          } else if (op.kind === 'price')
            await api()
              .patch(`/api/inventory/${item.id}/price?price=${(op.cents / 100).toFixed(2)}`)
              .set('Authorization', admin.auth)
              .expect(200);
          else if (op.kind === 'put') {
            const current = await api()
              .get(`/api/inventory/${item.id}`)
              .set('Authorization', admin.auth)
              .expect(200);
            await api()
              .put(`/api/inventory/${item.id}`)
              .set('Authorization', admin.auth)
              .send({ name: current.body.name, quantity: op.quantity, price: current.body.price, supplierId })
              .expect(200);
            quantity[op.item] = op.quantity;
          } else if (op.kind === 'delete' && quantity[op.item] === 0) {
            await api()
              .delete(`/api/inventory/${item.id}?reason=SCRAPPED`)
              .set('Authorization', admin.auth)
              .expect(204);
            live[op.item] = false;
          }
        }
        await waitForHistorySettled(testApp().services, 30000);
        const ids = items.map(i => i.id);
        const rows = await testApp()
          .services.orm.em.fork()
          .execute<HistoryRow[]>(
            `select item_id, change, quantity_after, reason, price_at_change::text as price,
                    (extract(epoch from "timestamp") * 1000000)::bigint::text as micros,
                    to_char("timestamp" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ts
               from stock_history where item_id = any(string_to_array(?, ',')::uuid[]) order by outbox_event_id`,
            [ids.join(',')],
          );
        const instants = new Set<number>();
        for (const r of rows) for (const d of [-1, 0, 1]) instants.add(Date.parse(r.ts) + d);
        for (const atMs of [...instants].filter(t => t <= Date.now())) {
          const at = new Date(atMs).toISOString();
          const expected = replay(rows, ids, atMs);
          for (const id of ids) {
            const res = await itemAsOf(id, at);
            const want = expected.get(id);
            if (!want) expect(res.status, `${id} at ${at}`).to.equal(404);
            else {
              expect(res.status, `${id} at ${at}`).to.equal(200);
              expect(res.body, `${id} at ${at}`).to.include({
                quantity: want.quantity,
                price: want.priceCents / 100,
                totalValue: (want.quantity * want.priceCents) / 100,
                asOf: at,
              });
            }
          }
          const value = (await valueAsOf(supplierId, at)).body;
          const states = [...expected.values()];
          expect(value, `value at ${at}`).to.deep.equal({
            asOf: at,
            totalValue: states.reduce((s, v) => s + v.quantity * v.priceCents, 0) / 100,
            totalQuantity: states.reduce((s, v) => s + v.quantity, 0),
            items: states.length,
          });
        }
      }),
      { numRuns: 12 },
    );
  });

  it('When asked exactly at a change, before the item existed and after its deletion, then the boundaries hold (name, sku, minimum and version too)', async () => {
    const supplierId = (await newSupplier(api(), admin.auth)).id;
    const beforeCreate = new Date(Date.now() - 5).toISOString();
    const item = await newItem(api(), admin.auth, supplierId, { quantity: 0, price: 4, sku: 'ASOF-1' });
    await api()
      .patch(`/api/inventory/${item.id}/name?name=${encodeURIComponent(`${item.name} v2`)}`)
      .set('Authorization', admin.auth)
      .expect(200);
    await api().delete(`/api/inventory/${item.id}?reason=LOST`).set('Authorization', admin.auth).expect(204);
    const changes = await testApp()
      .services.orm.em.fork()
      .execute<{ at: string }[]>(
        `select to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at from item_change
          where item_id = ? order by at, id`,
        [item.id],
      );
    const [created, renamed, deleted] = changes.map(c => c.at);
    await itemAsOf(item.id, beforeCreate).expect(404);
    const atCreate = (await itemAsOf(item.id, created).expect(200)).body;
    expect(atCreate).to.include({
      name: item.name,
      sku: 'ASOF-1',
      quantity: 0,
      version: 1,
      minimumQuantity: 0,
    });
    if (renamed !== created)
      expect(
        (await itemAsOf(item.id, new Date(Date.parse(renamed) - 1).toISOString()).expect(200)).body.name,
      ).to.equal(item.name);
    expect((await itemAsOf(item.id, renamed).expect(200)).body).to.include({
      name: `${item.name} v2`,
      version: 2,
    });
    await itemAsOf(item.id, deleted).expect(404);
    await itemAsOf(item.id, new Date().toISOString()).expect(404);
    expect((await valueAsOf(supplierId, renamed)).body.items).to.equal(1);
    expect((await valueAsOf(supplierId, deleted)).body.items).to.equal(0);
  });

  it('When asked at the createdAt or updatedAt an answer shows, then the item as of then includes that change (creation, PUT, price, rename, adjustment; 15 rounds)', async () => {
    const supplierId = (await newSupplier(api(), admin.auth)).id;
    const at = async (id: string, instant: string) => (await itemAsOf(id, instant).expect(200)).body;
    for (let round = 0; round < 15; round += 1) {
      const item = await newItem(api(), admin.auth, supplierId, { quantity: 3, price: 2 });
      expect(await at(item.id, item.createdAt), 'asOf = createdAt').to.include({ quantity: 3, version: 1 });
      const put = await api()
        .put(`/api/inventory/${item.id}`)
        .set('Authorization', admin.auth)
        .send({ name: item.name, quantity: 4, price: 2.5, supplierId, minimumQuantity: 0 })
        .expect(200);
      expect(await at(item.id, put.body.updatedAt), 'PUT').to.include({ quantity: 4, price: 2.5 });
      const priced = await api()
        .patch(`/api/inventory/${item.id}/price?price=3`)
        .set('Authorization', admin.auth)
        .expect(200);
      expect(await at(item.id, priced.body.updatedAt), 'price').to.include({ price: 3 });
      const renamed = await api()
        .patch(`/api/inventory/${item.id}/name?name=${encodeURIComponent(`${item.name} v2`)}`)
        .set('Authorization', admin.auth)
        .expect(200);
      expect(await at(item.id, renamed.body.updatedAt), 'rename').to.include({ name: `${item.name} v2` });
      const adjusted = await api()
        .patch(`/api/inventory/${item.id}/quantity?delta=2&reason=RESTOCK`)
        .set('Authorization', admin.auth)
        .expect(200);
      expect(await at(item.id, adjusted.body.updatedAt), 'adjust').to.include({ quantity: 6, version: 5 });
    }
  });

  it('When asOf is in the future, outside the supported dates or malformed, then 400 (localized); anonymous callers get 401', async () => {
    const supplierId = (await newSupplier(api(), admin.auth)).id;
    const item = await newItem(api(), admin.auth, supplierId);
    const future = await itemAsOf(item.id, new Date(Date.now() + 3_600_000).toISOString())
      .set('Accept-Language', 'de')
      .expect(400);
    expect(future.body.message).to.equal('asOf darf nicht in der Zukunft liegen');
    await itemAsOf(item.id, '1899-12-31T00:00:00Z').expect(400);
    await itemAsOf(item.id, 'yesterday').expect(400);
    await api().get('/api/inventory/value').set('Authorization', user.auth).expect(400);
    await api()
      .get(`/api/inventory/value?asOf=${new Date().toISOString()}&supplierId=x`)
      .set('Authorization', user.auth)
      .expect(400);
    await api().get(`/api/inventory/value?asOf=${new Date().toISOString()}`).expect(401);
    await api().get(`/api/inventory/${item.id}?asOf=${new Date().toISOString()}`).expect(401);
  });

  it('When a date-time parameter names a day or time that does not exist (30 February, hour 24), then 400 in the error shape, en and de, wherever dates are taken', async () => {
    const supplierId = (await newSupplier(api(), admin.auth)).id;
    const item = await newItem(api(), admin.auth, supplierId);
    const reads = (bad: string) => [
      { url: `/api/inventory/${item.id}?asOf=${bad}`, field: 'asOf' },
      { url: `/api/inventory/value?asOf=${bad}`, field: 'asOf' },
      { url: `/api/stock-history/search?startDate=${bad}`, field: 'startDate' },
      { url: `/api/stock-history/search?endDate=${bad}`, field: 'endDate' },
      { url: `/api/stock-history/export.csv?startDate=${bad}`, field: 'startDate' },
      { url: `/api/analytics/financial/summary?from=${bad}&to=2026-03-31`, field: 'from' },
      { url: `/api/analytics/stock-value?start=2026-01-01&end=${bad}`, field: 'end' },
      { url: `/api/analytics/summary?startDate=${bad}`, field: 'startDate' },
    ];
    for (const bad of ['2026-02-30T00:00:00Z', '2026-02-29', '2026-04-31T10:00:00.000Z'])
      for (const { url, field } of reads(encodeURIComponent(bad))) {
        const en = await api().get(url).set('Authorization', user.auth).expect(400);
        expect(en.body, url).to.include({ error: 'bad_request', messageKey: 'error.date.calendar' });
        expect(en.body.fieldErrors[field], url).to.equal(
          `${field} names a day or time that does not exist on the calendar`,
        );
        const de = await api()
          .get(url)
          .set('Authorization', user.auth)
          .set('Accept-Language', 'de')
          .expect(400);
        expect(de.body.message, url).to.equal(
          `${field} nennt einen Tag oder eine Uhrzeit, die es im Kalender nicht gibt`,
        );
      }
    // Hour 24 (which Date reads as the next day's midnight) is refused too.
    for (const { url, field } of reads(encodeURIComponent('2026-01-01T24:00:00Z'))) {
      const res = await api().get(url).set('Authorization', user.auth).expect(400);
      expect(res.body.fieldErrors, url).to.have.property(field);
    }
    // Days that exist still answer, a leap day included.
    await itemAsOf(item.id, '2024-02-29T12:00:00Z').expect(404);
    await api()
      .get('/api/stock-history/search?startDate=2024-02-29T00:00:00Z&endDate=2024-03-01')
      .set('Authorization', user.auth)
      .expect(200);
  });

  describe('in demo mode', () => {
    let demo: TestApp;
    before(async () => {
      demo = await startTestApp({ APP_DEMO_READONLY: 'true' }, { migrate: false });
    });
    after(async () => demo?.close());

    it('When an anonymous caller asks for an item as of an instant, then 401 while the plain item read stays public', async () => {
      const supplierId = (await newSupplier(api(), admin.auth)).id;
      const item = await newItem(api(), admin.auth, supplierId);
      const at = new Date().toISOString();
      const server = demo.server.server;
      await request(server).get(`/api/inventory/${item.id}`).expect(200);
      await request(server).get(`/api/inventory/${item.id}?asOf=${at}`).expect(401);
      await request(server).get(`/api/inventory/value?asOf=${at}`).expect(401);
      await request(server).get('/api/inventory/changes').expect(401);
      await request(server)
        .get(`/api/inventory/${item.id}?asOf=${at}`)
        .set('Authorization', user.auth)
        .expect(200);
    });
  });
});
