import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { sql } from '../support/products.js';

const CORRELATION = /^SR-\d{13}-\d{4}$/;
const nested = (levels: number, inner = '1') => '['.repeat(levels) + inner + ']'.repeat(levels);

/** The central error body (inventory routes) with its message key. */
function expectCentral(body: Record<string, any>, status: number, messageKey: string): void {
  expect(body).to.include({
    error: status === 422 ? 'unprocessable_entity' : 'bad_request',
    status,
    messageKey,
  });
  expect(body.correlationId).to.match(CORRELATION);
  expect(body.message).to.be.a('string').and.not.equal(messageKey);
}

describe('Input hardening (issue 13: what a fuzz and security probe found)', () => {
  let admin: TestUser;
  let user: TestUser;
  let supplierId: string;
  let itemId: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'harden-admin');
    user = await createUser(testApp().services, 'ROLE_USER', 'harden-user');
    supplierId = (await newSupplier(api(), admin.auth)).id;
    itemId = (await newItem(api(), admin.auth, supplierId)).id;
  });

  describe('Deeply nested JSON', () => {
    const jsonOperations = (): [string, string, string, 'central' | 'product'][] => [
      ['post', '/api/auth/login', '', 'product'],
      ['post', '/api/inventory', admin.auth, 'central'],
      ['put', `/api/inventory/${itemId}`, admin.auth, 'central'],
      ['post', '/api/suppliers', admin.auth, 'central'],
      ['post', '/api/analytics/stock-updates/query', user.auth, 'central'],
      ['post', '/api/products', admin.auth, 'product'],
      ['put', '/api/products/stock/batch', user.auth, 'product'],
    ];

    for (const [label, body] of [
      ['the whole body is 5,000 nested arrays', nested(5000)],
      ['a field holds 10,000 nested arrays', `{"name": ${nested(10000)}, "username": ${nested(10000)}}`],
      ['a field holds 5,000 nested objects', `{"name": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`],
    ]) {
      it(`When ${label}, then every JSON operation (anonymous login included) answers 400, never 500`, async () => {
        for (const [method, url, auth, style] of jsonOperations()) {
          const req = (api() as any)[method](url).set('Content-Type', 'application/json');
          if (auth) req.set('Authorization', auth);
          const res = await req.send(body);
          expect(res.status, `${method} ${url}`).to.equal(400);
          expect(res.body.message).to.equal('The request body is nested too deeply (at most 32 levels)');
          if (style === 'product') expect(res.body).to.include({ success: false, status: 400 });
          else expectCentral(res.body, 400, 'error.json.too.deep');
        }
      });
    }

    it('When nesting is within the bound but a scalar is expected, then the usual validation message (German too)', async () => {
      const res = await api()
        .post('/api/suppliers?lang=de')
        .set('Authorization', admin.auth)
        .send({ name: JSON.parse(nested(30)) })
        .expect(400);
      expect(res.body.fieldErrors).to.have.property('name');
      const deep = await api()
        .post('/api/suppliers?lang=de')
        .set('Authorization', admin.auth)
        .set('Content-Type', 'application/json')
        .send(`{"name": ${nested(33)}}`)
        .expect(400);
      expect(deep.body.message).to.equal('Der Anfragetext ist zu tief verschachtelt (höchstens 32 Ebenen)');
    });

    it('When brackets are text inside a string, then they do not count as nesting', async () => {
      const name = `Brackets ${randomUUID().slice(0, 6)} ${'['.repeat(100)}`;
      const res = await api()
        .post('/api/suppliers')
        .set('Authorization', admin.auth)
        .send({ name, contactName: '\\"[[[' })
        .expect(201);
      expect(res.body.name).to.equal(name);
    });
  });

  describe('Invalid UTF-8 in JSON bodies', () => {
    const raw = (text: string, bad: number[]) => {
      const [before, after] = text.split('@');
      return Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]);
    };
    /** Sends the bytes exactly as given (supertest would serialise a Buffer). */
    const postBytes = async (path: string, auth: string, bytes: Buffer, type = 'application/json') => {
      const res = await fetch(`http://127.0.0.1:${testApp().server.port}${path}`, {
        method: 'POST',
        headers: { Authorization: auth, 'Content-Type': type },
        body: bytes,
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };

    it('When a body holds malformed UTF-8, then 400 and nothing is stored (no U+FFFD replacement)', async () => {
      const tag = randomUUID().slice(0, 8);
      for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xc0, 0xaf]]) {
        const res = await postBytes('/api/suppliers', admin.auth, raw(`{"name": "Bad ${tag} @ name"}`, bad));
        expect(res.status, String(bad)).to.equal(400);
        expectCentral(res.body, 400, 'error.body.encoding');
        expect(res.body.message).to.equal('The request body is not valid UTF-8');
      }
      const product = await postBytes(
        '/api/products?lang=de',
        admin.auth,
        raw(`{"name": "Bad ${tag} @", "quantity": 1, "price": 1}`, [0xfe]),
        'application/json; charset=utf-8',
      );
      expect(product.status).to.equal(400);
      expect(product.body).to.include({ success: false, message: 'Der Anfragetext ist kein gültiges UTF-8' });
      const stored = await sql(
        `select (select count(*) from supplier where name like ?)::int as s,
                (select count(*) from product where name like ?)::int as p`,
        [`Bad ${tag}%`, `Bad ${tag}%`],
      );
      expect(stored[0]).to.deep.equal({ s: 0, p: 0 });
    });

    it('When a body holds valid multi-byte UTF-8 (umlauts, emoji), then it is stored as sent', async () => {
      const name = `Lieferant Größe 📦 ${randomUUID().slice(0, 6)}`;
      const res = await postBytes('/api/suppliers', admin.auth, Buffer.from(JSON.stringify({ name })));
      expect(res.status).to.equal(201);
      expect(res.body.name).to.equal(name);
    });
  });

  describe('Dates outside 1900-01-01..9999-12-30', () => {
    const outside = [
      '/api/stock-history/search?startDate=-271821-04-20',
      '/api/stock-history/search?startDate=%2B010000-01-01T00:00:00Z',
      '/api/stock-history/search?startDate=-004714-01-01',
      '/api/stock-history/search?endDate=9999-12-31',
      '/api/stock-history/search?startDate=1899-12-31T23:59:59Z',
      '/api/analytics/stock-updates?endDate=9999-12-31',
      '/api/analytics/stock-updates?startDate=1899-12-31',
      '/api/analytics/stock-updates?endDate=9999-12-30T23:00:00-05:00',
      '/api/analytics/stock-value?start=1899-12-31&end=1900-01-05',
      '/api/analytics/monthly-stock-movement?start=2020-01-01&end=9999-12-31',
      '/api/analytics/summary?endDate=9999-12-31',
      `/api/analytics/price-trend?itemId=ITEM&start=1000-01-01&end=2020-01-01`,
      '/api/analytics/financial/summary?from=2020-01-01&to=9999-12-31',
      '/api/analytics/reason-breakdown?startDate=0001-01-01',
      '/api/analytics/by-employee?endDate=9999-12-31',
      '/api/analytics/employee-changes?endDate=9999-12-31',
    ];

    it('When any date parameter lies outside the supported range, then 400 before any SQL (never 500)', async () => {
      for (const url of outside) {
        const res = await api().get(url.replace('ITEM', itemId)).set('Authorization', admin.auth);
        expect(res.status, url).to.equal(400);
        expectCentral(res.body, 400, 'error.date.range');
        expect(res.body.message).to.match(/must lie between 1900-01-01 and 9999-12-30$/);
      }
      for (const endDate of ['9999-12-31', '9999-12-31T00:00:00Z', '1899-12-31']) {
        const res = await api()
          .post('/api/analytics/stock-updates/query?lang=de')
          .set('Authorization', user.auth)
          .send({ endDate })
          .expect(400);
        expect(res.body.message).to.equal('endDate muss zwischen 1900-01-01 und 9999-12-30 liegen');
      }
    });

    it('When dates sit exactly on the bounds, then they are answered', async () => {
      for (const url of [
        '/api/stock-history/search?startDate=1900-01-01&endDate=9999-12-30T23:59:59.999Z',
        // A start on the last day: the count rows' month and day bounds round up past year 9999.
        '/api/stock-history/search?startDate=9999-12-30',
        '/api/stock-history/search?startDate=9999-12-30&size=5',
        `/api/stock-history/search?startDate=9999-12-30&supplierId=${randomUUID()}`,
        '/api/analytics/stock-updates?startDate=1900-01-01&endDate=9999-12-30',
        '/api/analytics/stock-updates?startDate=1900-01-01T00:00:00Z&endDate=9999-12-30T23:59:59Z',
        '/api/analytics/employee-changes?startDate=1900-01-01&endDate=9999-12-30',
        '/api/analytics/by-employee?granularity=daily&startDate=1900-01-01&endDate=9999-12-30',
      ])
        await api().get(url).set('Authorization', admin.auth).expect(200);
      await api()
        .post('/api/analytics/stock-updates/query')
        .set('Authorization', user.auth)
        .send({ startDate: '1900-01-01', endDate: '9999-12-30' })
        .expect(200);
    });
  });

  describe('Range sizes', () => {
    it('When N1 is asked for more than 3,660 days, then 400 `the range may span at most 3660 days` (en, de)', async () => {
      const res = await api()
        .get('/api/analytics/stock-value?start=1900-01-01&end=9999-12-30')
        .set('Authorization', user.auth)
        .expect(400);
      expectCentral(res.body, 400, 'analytics.range.too.long');
      expect(res.body.message).to.equal('the range may span at most 3660 days');
      const de = await api()
        .get('/api/analytics/stock-value?start=2000-01-01&end=2010-01-08&lang=de')
        .set('Authorization', user.auth)
        .expect(400);
      expect(de.body.message).to.equal('der Zeitraum darf höchstens 3660 Tage umfassen');
    });

    it('When N1 is asked for exactly 3,660 days, then one point per day', async () => {
      const res = await api()
        .get('/api/analytics/stock-value?start=2000-01-01&end=2010-01-07')
        .set('Authorization', user.auth)
        .expect(200);
      expect(res.body).to.have.length(3660);
      expect(res.body[3659].date).to.equal('2010-01-07');
    });

    it('When the rollup-backed analytics are asked for 8,000 years, then the answer is bounded by the data, quickly', async () => {
      const span = 'startDate=1900-01-01&endDate=9999-12-30';
      for (const url of [
        `/api/analytics/by-employee?granularity=daily&${span}`,
        `/api/analytics/by-employee?granularity=weekly&${span}`,
        `/api/analytics/reason-breakdown?${span}`,
        `/api/analytics/summary?${span}`,
        `/api/analytics/monthly-stock-movement?start=1900-01-01&end=9999-12-30`,
        `/api/analytics/price-trend?itemId=${itemId}&start=1900-01-01&end=9999-12-30`,
        `/api/analytics/financial/summary?from=1900-01-01&to=9999-12-30`,
        `/api/analytics/stock-updates?${span}`,
        `/api/analytics/employee-changes?${span}`,
        `/api/stock-history/search?${span}`,
      ]) {
        const started = Date.now();
        const res = await api().get(url).set('Authorization', admin.auth).expect(200);
        expect(Date.now() - started, url).to.be.below(2000);
        expect(JSON.stringify(res.body).length, url).to.be.below(1_000_000);
      }
    });
  });

  describe('The quantity maximum of an adjustment', () => {
    it('When PATCH quantity would take an item above 999,999, then 422 `Quantity cannot exceed 999999` and nothing is stored', async () => {
      const item = await newItem(api(), admin.auth, supplierId, { quantity: 999_990 });
      await api()
        .patch(`/api/inventory/${item.id}/quantity?delta=9&reason=RESTOCK`)
        .set('Authorization', user.auth)
        .expect(200);
      const events = async () =>
        (await sql(`select count(*)::int as n from outbox_event where aggregate_id = ?`, [item.id]))[0].n;
      const before = await events();
      for (const delta of [1, 60, 2147483647]) {
        const res = await api()
          .patch(`/api/inventory/${item.id}/quantity?delta=${delta}&reason=RESTOCK&lang=de`)
          .set('Authorization', user.auth)
          .expect(422);
        expectCentral(res.body, 422, 'inventory.item.quantity.max');
        expect(res.body.message).to.equal('Menge darf 999999 nicht überschreiten');
      }
      const now = await api().get(`/api/inventory/${item.id}`).set('Authorization', user.auth).expect(200);
      expect(now.body).to.include({ quantity: 999_999, version: item.version + 1 });
      expect(await events()).to.equal(before);
      await api()
        .patch(`/api/inventory/${item.id}/quantity?delta=-999999&reason=SALE`)
        .set('Authorization', user.auth)
        .expect(200);
    });

    it('When 30 concurrent adjustments race to the maximum, then exactly those that fit succeed', async () => {
      const item = await newItem(api(), admin.auth, supplierId, { quantity: 999_000 });
      const statuses = await inLanes(30, 10, async () => {
        const res = await api()
          .patch(`/api/inventory/${item.id}/quantity?delta=100&reason=RESTOCK`)
          .set('Authorization', user.auth);
        return res.status;
      });
      expect(statuses.filter(s => s === 200)).to.have.length(9);
      expect(statuses.filter(s => s === 422)).to.have.length(21);
      const now = await api().get(`/api/inventory/${item.id}`).set('Authorization', user.auth).expect(200);
      expect(now.body.quantity).to.equal(999_900);
    });
  });

  describe('Integers are plain decimal digits', () => {
    const lenient = ['1e2', '5.', '%205', '5%20', '-0', '0x10', '%2B5', '5.0', '1_0', '', 'Infinity'];
    const routes = (): [string, string, 'central' | 'product' | 'paging'][] => [
      ['/api/items?size=', admin.auth, 'central'],
      ['/api/items?page=', admin.auth, 'central'],
      ['/api/inventory/search?name=&page=', admin.auth, 'central'],
      ['/api/suppliers?limit=', admin.auth, 'central'],
      ['/api/suppliers?size=', admin.auth, 'central'],
      ['/api/stock-history?size=', admin.auth, 'central'],
      ['/api/stock-history/search?page=', admin.auth, 'central'],
      ['/api/analytics/stock-updates?minChange=', admin.auth, 'central'],
      ['/api/analytics/employee-changes?size=', admin.auth, 'central'],
      ['/api/products/paged?page=', user.auth, 'product'],
      ['/api/products/paged?size=', user.auth, 'product'],
      ['/api/products?limit=', user.auth, 'product'],
    ];

    it('When an integer parameter is written as 1e2, `5.`, ` 5`, -0, +5, hex or 5.0, then 400', async () => {
      for (const [prefix, auth, style] of routes())
        for (const value of lenient) {
          if (value === '' && prefix.endsWith('size=')) continue; // '' counts as absent for some
          const res = await api().get(`${prefix}${value}`).set('Authorization', auth);
          expect(res.status, `${prefix}${value}`).to.equal(400);
          if (style === 'product') expect(res.body.success).to.equal(false);
          else expect(res.body.error).to.equal('bad_request');
        }
    });

    it('When adjust quantity gets a lenient delta or expectedQuantity, then 400 and nothing changes', async () => {
      const item = await newItem(api(), admin.auth, supplierId, { quantity: 10 });
      for (const query of [
        'delta=1e1',
        'delta=5.',
        'delta=%205',
        'delta=-0',
        'delta=1&expectedQuantity=1e1',
      ]) {
        const res = await api()
          .patch(`/api/inventory/${item.id}/quantity?${query}&reason=RESTOCK`)
          .set('Authorization', user.auth);
        expect(res.status, query).to.equal(400);
      }
      const now = await api().get(`/api/inventory/${item.id}`).set('Authorization', user.auth).expect(200);
      expect(now.body).to.include({ quantity: 10, version: item.version });
    });

    it('When integers are plain digits (negative where allowed, leading zeros), then they are accepted', async () => {
      await api().get('/api/items?page=0&size=005').set('Authorization', admin.auth).expect(200);
      await api()
        .get('/api/analytics/stock-updates?minChange=-5&maxChange=10')
        .set('Authorization', admin.auth)
        .expect(200);
      await api().get('/api/products/paged?page=1&size=20').set('Authorization', user.auth).expect(200);
      const item = await newItem(api(), admin.auth, supplierId, { quantity: 10 });
      const res = await api()
        .patch(`/api/inventory/${item.id}/quantity?delta=-3&reason=SALE&expectedQuantity=10`)
        .set('Authorization', user.auth)
        .expect(200);
      expect(res.body.quantity).to.equal(7);
    });

    it('When a price is 1e15, then it is refused as too large, not as having too many decimals', async () => {
      const product = await api()
        .post('/api/products')
        .set('Authorization', admin.auth)
        .send({ name: `Huge ${randomUUID().slice(0, 6)}`, quantity: 1, price: 1e15 })
        .expect(400);
      expect(product.body.message).to.equal('Price cannot exceed 10000000.00.');
      const item = await api()
        .post('/api/inventory')
        .set('Authorization', admin.auth)
        .send({ name: `Huge ${randomUUID().slice(0, 6)}`, quantity: 1, price: 1e15, supplierId })
        .expect(400);
      expect(item.body.fieldErrors).to.deep.equal({ price: 'Price cannot exceed 10000000.00' });
      const query = await api()
        .patch(`/api/inventory/${itemId}/price?price=1e15`)
        .set('Authorization', user.auth)
        .expect(400);
      expect(query.body.messageKey).to.not.equal('inventory.item.price.precision');
    });
  });
});
