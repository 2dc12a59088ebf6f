import { expect } from 'chai';
import request from 'supertest';
import { api, testApp } from '../setup/hooks.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { inventorySuite } from '../support/inventory-suite.js';

describe('Inventory items (I1-I11)', () => {
  const fx = inventorySuite();

  const history = async (itemId: string) => {
    await waitForHistorySettled(testApp().services);
    const res = await api()
      .get(`/api/stock-history/item/${itemId}`)
      .set('Authorization', fx.user.auth)
      .expect(200);
    return res.body as {
      reason: string;
      change: number;
      quantityBefore: number;
      quantityAfter: number;
      priceAtChange: number;
      createdBy: string;
      itemName: string;
      supplierName: string;
    }[];
  };

  describe('I2 create', () => {
    it('When an admin creates an item, then 201 with Location, ETag, computed fields and an INITIAL_STOCK entry', async () => {
      const res = await api()
        .post('/api/inventory')
        .set('Authorization', fx.admin.auth)
        .send({
          name: '  Widget A1  ',
          quantity: 5,
          price: 1.25,
          supplierId: fx.supplierId,
          sku: 'W-A1',
          createdBy: 'mallory',
          notes: 'x',
        })
        .expect(201);
      expect(res.headers.location).to.equal(`/api/inventory/${res.body.id}`);
      expect(res.headers.etag).to.equal('"1"');
      expect(res.body).to.include({
        name: 'Widget A1',
        sku: 'W-A1',
        quantity: 5,
        price: 1.25,
        totalValue: 6.25,
        minimumQuantity: 0,
        version: 1,
      });
      expect(res.body.createdBy).to.equal(`${fx.admin.username}@example.test`);
      expect(res.body.supplierId).to.equal(fx.supplierId);
      const entries = await history(res.body.id);
      expect(entries).to.have.length(1);
      expect(entries[0]).to.include({
        reason: 'INITIAL_STOCK',
        change: 5,
        quantityBefore: 0,
        quantityAfter: 5,
        priceAtChange: 1.25,
        itemName: 'Widget A1',
      });
    });

    it('When the quantity is 0, then no history entry is written', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 0 });
      expect(await history(item.id)).to.deep.equal([]);
    });

    it('When fields are invalid, then 400 with fieldErrors and the contract messages', async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ name: '   ' }, 'name', 'Item name is required'],
        [{ name: 'x'.repeat(256) }, 'name', 'Item name cannot exceed 255 characters'],
        [{ quantity: -1 }, 'quantity', 'Quantity must be at least 0'],
        [{ quantity: 1000000 }, 'quantity', 'Quantity cannot exceed 999999'],
        [{ price: 0 }, 'price', 'Price must be greater than 0'],
        [{ price: 1.234 }, 'price', 'Price can have at most 2 decimal places'],
        [{ supplierId: undefined }, 'supplierId', 'Supplier is required'],
        [{ minimumQuantity: -1 }, 'minimumQuantity', 'Minimum quantity must be at least 0'],
        [{ id: 'abc' }, 'id', 'id must not be sent when creating a resource'],
      ];
      for (const [override, field, message] of cases) {
        const res = await api()
          .post('/api/inventory')
          .set('Authorization', fx.admin.auth)
          .send({ name: 'Valid name', quantity: 1, price: 1, supplierId: fx.supplierId, ...override })
          .expect(400);
        expect(res.body.error).to.equal('bad_request');
        expect(res.body.fieldErrors[field], JSON.stringify(res.body)).to.equal(message);
      }
    });

    it('When the name or sku exists (any case), then 409 DUPLICATE_RESOURCE before the supplier is checked', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { sku: 'DUP-SKU-1' });
      const byName = await api()
        .post('/api/inventory')
        .set('Authorization', fx.admin.auth)
        .send({
          name: item.name.toUpperCase(),
          quantity: 1,
          price: 1,
          supplierId: '00000000-0000-4000-8000-000000000000',
        })
        .expect(409);
      expect(byName.body).to.include({
        error: 'DUPLICATE_RESOURCE',
        message: 'An inventory item with this name already exists',
      });
      const bySku = await api()
        .post('/api/inventory')
        .set('Authorization', fx.admin.auth)
        .send({ name: 'Other name 1', sku: 'dup-sku-1', quantity: 1, price: 1, supplierId: fx.supplierId })
        .expect(409);
      expect(bySku.body.error).to.equal('DUPLICATE_RESOURCE');
      const noSupplier = await api()
        .post('/api/inventory')
        .set('Authorization', fx.admin.auth)
        .send({
          name: 'Other name 2',
          quantity: 1,
          price: 1,
          supplierId: '00000000-0000-4000-8000-000000000000',
        })
        .expect(404);
      expect(noSupplier.body).to.include({ error: 'not_found', message: 'Supplier not found' });
    });

    it('When anonymous or a USER creates, then 401 / 403', async () => {
      await api()
        .post('/api/inventory')
        .send({ name: 'n', quantity: 1, price: 1, supplierId: fx.supplierId })
        .expect(401);
      await api()
        .post('/api/inventory')
        .set('Authorization', fx.user.auth)
        .send({ name: 'n', quantity: 1, price: 1, supplierId: fx.supplierId })
        .expect(403);
    });
  });

  describe('I1, I3, I6 reads', () => {
    it('When reading, then list, one item with ETag, count; unknown ids are 404; anonymous is 401', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId);
      const list = await api().get('/api/inventory').set('Authorization', fx.user.auth).expect(200);
      expect(list.body.map((i: { id: string }) => i.id)).to.include(item.id);
      const one = await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).expect(200);
      expect(one.headers.etag).to.equal('"1"');
      expect(one.body).to.deep.equal(item);
      const count = await api().get('/api/inventory/count').set('Authorization', fx.user.auth).expect(200);
      expect(count.body).to.equal(list.body.length);
      await api()
        .get('/api/inventory/00000000-0000-4000-8000-000000000000')
        .set('Authorization', fx.user.auth)
        .expect(404);
      const bad = await api().get('/api/inventory/not-a-uuid').set('Authorization', fx.user.auth).expect(404);
      expect(bad.body.message).to.equal('Inventory item not found');
      await api().get('/api/inventory').expect(401);
      await api().get(`/api/inventory/${item.id}`).expect(401);
    });
  });

  describe('I4 update', () => {
    it('When quantity and price change, then PRICE_CHANGE and MANUAL_ADJUSTMENT entries; body id ignored', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 10, price: 2 });
      const res = await api()
        .put(`/api/inventory/${item.id}`)
        .set('Authorization', fx.admin.auth)
        .set('If-Match', '"1"')
        .send({
          id: 'other',
          name: item.name,
          quantity: 7,
          price: 3.5,
          supplierId: fx.supplierId,
          minimumQuantity: 2,
        })
        .expect(200);
      expect(res.body).to.include({
        id: item.id,
        quantity: 7,
        price: 3.5,
        totalValue: 24.5,
        minimumQuantity: 2,
        version: 2,
      });
      expect(res.headers.etag).to.equal('"2"');
      const entries = await history(item.id);
      expect(
        entries.map(e => [e.reason, e.change, e.quantityBefore, e.quantityAfter, e.priceAtChange]),
      ).to.deep.include.members([
        ['MANUAL_ADJUSTMENT', -3, 10, 7, 3.5],
        ['PRICE_CHANGE', 0, 10, 10, 3.5],
        ['INITIAL_STOCK', 10, 0, 10, 2],
      ]);
    });

    it('When the item is missing, If-Match is stale or the body invalid, then 404 / 412 / 400', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId);
      const body = { name: item.name, quantity: 1, price: 1, supplierId: fx.supplierId };
      await api()
        .put('/api/inventory/00000000-0000-4000-8000-000000000000')
        .set('Authorization', fx.admin.auth)
        .send(body)
        .expect(404);
      const stale = await api()
        .put(`/api/inventory/${item.id}`)
        .set('Authorization', fx.admin.auth)
        .set('If-Match', '"9"')
        .send(body)
        .expect(412);
      expect(stale.body.error).to.equal('precondition_failed');
      await api()
        .put(`/api/inventory/${item.id}`)
        .set('Authorization', fx.admin.auth)
        .send({ ...body, price: undefined })
        .expect(400);
      await api().put(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).send(body).expect(403);
    });
  });

  describe('I5 delete', () => {
    it('When deleting, then 404 -> 409 with stock -> 400 bad reason -> 204 with a history entry that survives', async () => {
      await api()
        .delete('/api/inventory/00000000-0000-4000-8000-000000000000?reason=LOST')
        .set('Authorization', fx.admin.auth)
        .expect(404);
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 2 });
      const conflict = await api()
        .delete(`/api/inventory/${item.id}`)
        .set('Authorization', fx.admin.auth)
        .expect(409);
      expect(conflict.body.message).to.equal(
        'Stock must first be removed by changing the quantity before the item can be deleted',
      );
      await api()
        .patch(`/api/inventory/${item.id}/quantity?delta=-2&reason=SOLD`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      const bad = await api()
        .delete(`/api/inventory/${item.id}?reason=SALE`)
        .set('Authorization', fx.admin.auth)
        .expect(400);
      expect(bad.body.message).to.equal('Invalid reason for deletion');
      await api().delete(`/api/inventory/${item.id}`).set('Authorization', fx.admin.auth).expect(400);
      await api()
        .delete(`/api/inventory/${item.id}?reason=SCRAPPED`)
        .set('Authorization', fx.user.auth)
        .expect(403);
      await api()
        .delete(`/api/inventory/${item.id}?reason=SCRAPPED`)
        .set('Authorization', fx.admin.auth)
        .expect(204);
      await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.admin.auth).expect(404);
      const entries = await history(item.id);
      expect(entries.map(e => [e.reason, e.change, e.quantityAfter])).to.deep.equal([
        ['SCRAPPED', 0, 0],
        ['SALE', -2, 0],
        ['INITIAL_STOCK', 2, 2],
      ]);
    });
  });

  describe('I8 adjust quantity', () => {
    it('When parameters are bad, then 400 before 404', async () => {
      const missing = '00000000-0000-4000-8000-000000000000';
      for (const q of [
        'delta=0&reason=SALE',
        'reason=SALE',
        'delta=1',
        'delta=1&reason=sale',
        'delta=1.5&reason=SALE',
        'delta=3000000000&reason=SALE',
      ])
        await api()
          .patch(`/api/inventory/${missing}/quantity?${q}`)
          .set('Authorization', fx.user.auth)
          .expect(400);
      await api()
        .patch(`/api/inventory/${missing}/quantity?delta=1&reason=SALE`)
        .set('Authorization', fx.user.auth)
        .expect(404);
    });

    it('When adjusting, then 412 on a stale expectation, 422 below zero (nothing saved), aliases normalised', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 3 });
      const url = `/api/inventory/${item.id}/quantity`;
      await api()
        .patch(`${url}?delta=-1&reason=SALE&expectedQuantity=2`)
        .set('Authorization', fx.user.auth)
        .expect(412);
      await api()
        .patch(`${url}?delta=-1&reason=SALE`)
        .set('If-Match', '"7"')
        .set('Authorization', fx.user.auth)
        .expect(412);
      const negative = await api()
        .patch(`${url}?delta=-4&reason=SALE`)
        .set('Authorization', fx.user.auth)
        .expect(422);
      expect(negative.body.error).to.equal('unprocessable_entity');
      const ok = await api()
        .patch(`${url}?delta=-1&reason=SOLD&expectedQuantity=3&limit=5`)
        .set('If-Match', '"1"')
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(ok.body).to.include({ quantity: 2, version: 2, totalValue: 5 });
      expect(ok.headers.etag).to.equal('"2"');
      for (const reason of ['RETURNED_BY_CUSTOMER', 'MANUAL_UPDATE', 'RETURNED_TO_SUPPLIER'])
        await api().patch(`${url}?delta=1&reason=${reason}`).set('Authorization', fx.user.auth).expect(200);
      const entries = await history(item.id);
      expect(entries.map(e => e.reason)).to.deep.equal([
        'RETURNED_TO_SUPPLIER',
        'MANUAL_ADJUSTMENT',
        'RETURN',
        'SALE',
        'INITIAL_STOCK',
      ]);
      expect(entries[3]).to.include({
        change: -1,
        quantityBefore: 3,
        quantityAfter: 2,
        createdBy: `${fx.user.username}@example.test`,
      });
      await api().patch(`${url}?delta=1&reason=SALE`).expect(401);
    });
  });

  describe('ETag / If-None-Match', () => {
    it('When reading one item, then a JSON answer with its length; with its ETag in If-None-Match, 304 without a body; HEAD has no body', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { name: `Grüße ${Date.now()}` });
      const one = await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).expect(200);
      expect(one.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(Number(one.headers['content-length'])).to.equal(Buffer.byteLength(one.text));
      expect(JSON.parse(one.text).name).to.equal(item.name);
      // 304 and HEAD are HTTP's own answers, outside the OpenAPI document: straight on the server.
      const http = () => request(testApp().server.server);
      const same = await http()
        .get(`/api/inventory/${item.id}`)
        .set('If-None-Match', one.headers.etag)
        .set('Authorization', fx.user.auth)
        .expect(304);
      expect(same.text).to.equal('');
      await api()
        .get(`/api/inventory/${item.id}`)
        .set('If-None-Match', '"999"')
        .set('Authorization', fx.user.auth)
        .expect(200);
      const head = await http()
        .head(`/api/inventory/${item.id}`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(head.text).to.equal(undefined);
      expect(head.headers['content-length']).to.equal(one.headers['content-length']);
    });
  });

  describe('ETag / If-Match', () => {
    it('When If-Match is unparsable, then 404 for a missing item and 412 for an existing one; * matches any', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 1 });
      await api()
        .patch('/api/inventory/00000000-0000-4000-8000-000000000000/price?price=2')
        .set('If-Match', 'garbage')
        .set('Authorization', fx.user.auth)
        .expect(404);
      await api()
        .patch(`/api/inventory/${item.id}/price?price=2`)
        .set('If-Match', 'garbage')
        .set('Authorization', fx.user.auth)
        .expect(412);
      await api()
        .patch(`/api/inventory/${item.id}/name?name=x${item.id.slice(0, 5)}`)
        .set('If-Match', '"2"')
        .set('Authorization', fx.admin.auth)
        .expect(412);
      await api()
        .delete(`/api/inventory/${item.id}?reason=LOST`)
        .set('If-Match', '"1"')
        .set('Authorization', fx.admin.auth)
        .expect(409);
      const ok = await api()
        .patch(`/api/inventory/${item.id}/price?price=2`)
        .set('If-Match', '*')
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(ok.headers.etag).to.equal('"2"');
      await api()
        .patch(`/api/inventory/${item.id}/price?price=3`)
        .set('If-Match', 'W/"2"')
        .set('Authorization', fx.user.auth)
        .expect(200);
    });
  });

  describe('I9 price, I10 rename', () => {
    it('When the price changes, then 200 with the new totalValue and a PRICE_CHANGE entry; bad prices 400; 404', async () => {
      const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 4, price: 1 });
      for (const q of ['', 'price=0', 'price=0.001', 'price=1.999', 'price=abc'])
        await api()
          .patch(`/api/inventory/${item.id}/price?${q}`)
          .set('Authorization', fx.user.auth)
          .expect(400);
      await api()
        .patch('/api/inventory/00000000-0000-4000-8000-000000000000/price?price=2')
        .set('Authorization', fx.user.auth)
        .expect(404);
      const res = await api()
        .patch(`/api/inventory/${item.id}/price?price=2.75`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(res.body).to.include({ price: 2.75, totalValue: 11 });
      const entries = await history(item.id);
      expect(entries[0]).to.include({
        reason: 'PRICE_CHANGE',
        change: 0,
        quantityBefore: 4,
        quantityAfter: 4,
        priceAtChange: 2.75,
      });
    });

    it('When renaming, then 400 blank -> 404 -> 409 duplicate -> 200; USER is 403', async () => {
      const a = await newItem(api(), fx.admin.auth, fx.supplierId);
      const b = await newItem(api(), fx.admin.auth, fx.supplierId);
      await api()
        .patch(`/api/inventory/${a.id}/name?name=%20%20`)
        .set('Authorization', fx.admin.auth)
        .expect(400);
      await api()
        .patch(`/api/inventory/${a.id}/name?name=${'x'.repeat(256)}`)
        .set('Authorization', fx.admin.auth)
        .expect(400);
      await api()
        .patch('/api/inventory/00000000-0000-4000-8000-000000000000/name?name=zz')
        .set('Authorization', fx.admin.auth)
        .expect(404);
      const dup = await api()
        .patch(`/api/inventory/${a.id}/name?name=${encodeURIComponent(b.name.toLowerCase())}`)
        .set('Authorization', fx.admin.auth)
        .expect(409);
      expect(dup.body.error).to.equal('DUPLICATE_RESOURCE');
      await api()
        .patch(`/api/inventory/${a.id}/name?name=Renamed%20${a.id.slice(0, 6)}`)
        .set('Authorization', fx.user.auth)
        .expect(403);
      const ok = await api()
        .patch(`/api/inventory/${a.id}/name?name=Renamed%20${a.id.slice(0, 6)}`)
        .set('Authorization', fx.admin.auth)
        .expect(200);
      expect(ok.body.name).to.equal(`Renamed ${a.id.slice(0, 6)}`);
    });
  });

  describe('I7 search, I11 page', () => {
    it('When searching, then the search page shape, name-or-sku substring, supplier and below-minimum filters', async () => {
      const s2 = (await newSupplier(api(), fx.admin.auth)).id;
      const a = await newItem(api(), fx.admin.auth, s2, {
        name: 'Zeta Bolt',
        sku: 'ZB-100',
        quantity: 1,
        minimumQuantity: 5,
      });
      const b = await newItem(api(), fx.admin.auth, s2, {
        name: 'Zeta Nut',
        quantity: 9,
        minimumQuantity: 5,
      });
      const all = await api()
        .get(`/api/inventory/search?name=&supplierId=${s2}`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(all.body.content.map((i: { id: string }) => i.id)).to.deep.equal([a.id, b.id]);
      expect(all.body.page).to.deep.equal({ size: 20, number: 0, totalElements: 2, totalPages: 1 });
      expect(all.body).to.include({
        totalElements: 2,
        first: true,
        last: true,
        empty: false,
        numberOfElements: 2,
      });
      const bySku = await api()
        .get('/api/inventory/search?name=zb-1')
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(bySku.body.content.map((i: { id: string }) => i.id)).to.deep.equal([a.id]);
      const below = await api()
        .get(`/api/inventory/search?name=zeta&belowMinimumOnly=true&supplierId=${s2}`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(below.body.content.map((i: { id: string }) => i.id)).to.deep.equal([a.id]);
      const sorted = await api()
        .get(`/api/inventory/search?name=&supplierId=${s2}&sort=quantity,desc&size=1&page=0`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(sorted.body.content[0].id).to.equal(b.id);
      expect(sorted.body).to.include({ totalPages: 2, last: false });
      const past = await api()
        .get(`/api/inventory/search?name=&supplierId=${s2}&page=5`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(past.body).to.include({ empty: true, totalElements: 2 });
      const size = await api()
        .get('/api/inventory/search?name=&size=101')
        .set('Authorization', fx.user.auth)
        .expect(400);
      expect(size.body).to.have.keys('error', 'message', 'timestamp', 'correlationId');
      expect(size.body.message).to.equal('page size must be between 1 and 100');
      await api().get('/api/inventory/search?name=&size=0').set('Authorization', fx.user.auth).expect(400);
      await api().get('/api/inventory/search?name=&page=-1').set('Authorization', fx.user.auth).expect(400);
      await api()
        .get('/api/inventory/search?name=&sort=secret')
        .set('Authorization', fx.user.auth)
        .expect(400);
      await api()
        .get('/api/inventory/search?name=&sort=name,sideways')
        .set('Authorization', fx.user.auth)
        .expect(400);
      await api().get('/api/inventory/search').set('Authorization', fx.user.auth).expect(400);
    });

    it('When paging /api/items, then a Spring-style page with size 1..200', async () => {
      const res = await api()
        .get('/api/items?size=2&sort=createdAt,desc')
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(res.body.content).to.have.length(2);
      expect(res.body.pageable).to.deep.equal({
        pageNumber: 0,
        pageSize: 2,
        sort: [{ property: 'createdAt', direction: 'DESC' }],
      });
      expect(res.body).to.not.have.property('page');
      const big = await api().get('/api/items?size=201').set('Authorization', fx.user.auth).expect(400);
      expect(big.body.message).to.equal('page size must be between 1 and 200');
      await api().get('/api/items?sort=sku').set('Authorization', fx.user.auth).expect(400);
    });
  });
  describe('writes through the unit of work', () => {
    const read = async (id: string) =>
      (await api().get(`/api/inventory/${id}`).set('Authorization', fx.user.auth).expect(200)).text;

    it('When an item is created, replaced, re-priced and renamed, then each answer is the item as a read returns it, byte for byte', async () => {
      const created = await api()
        .post('/api/inventory')
        .set('Authorization', fx.admin.auth)
        .send({ name: `Exact ${Date.now()}`, quantity: 3, price: 0.1, supplierId: fx.supplierId, sku: null })
        .expect(201);
      const id = created.body.id as string;
      expect(created.body).to.include({ totalValue: 0.3, price: 0.1, onOrderQuantity: 0, sku: null });
      expect(created.body.updatedAt).to.equal(created.body.createdAt);
      expect(created.text).to.equal(await read(id));
      const replaced = await api()
        .put(`/api/inventory/${id}`)
        .set('Authorization', fx.admin.auth)
        .send({
          name: `Exact ${Date.now()} b`,
          quantity: 999999,
          price: 9999999.99,
          supplierId: fx.supplierId,
          minimumQuantity: 2,
          sku: `EX-${Date.now()}`,
          reorderPoint: 4,
          orderUpToQuantity: 9,
        })
        .expect(200);
      expect(replaced.body).to.include({ version: 2, totalValue: 9999989990000.01 });
      expect(replaced.body.createdAt).to.equal(created.body.createdAt);
      expect(replaced.text).to.equal(await read(id));
      const repriced = await api()
        .patch(`/api/inventory/${id}/price?price=0.07`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      expect(repriced.body).to.include({ version: 3, price: 0.07, totalValue: 69999.93 });
      expect(repriced.text).to.equal(await read(id));
      const renamed = await api()
        .patch(`/api/inventory/${id}/name?name=${encodeURIComponent(`Exact ${Date.now()} c`)}`)
        .set('Authorization', fx.admin.auth)
        .expect(200);
      expect(renamed.body.version).to.equal(4);
      expect(renamed.text).to.equal(await read(id));
    });

    it('When two creations of one name (or sku) race, then one is 201 and the other 409, never 500', async () => {
      for (const clash of ['name', 'sku'] as const) {
        const name = `Race ${clash} ${Date.now()}`;
        const answers = await Promise.all(
          [1, 2, 3, 4].map(n =>
            api()
              .post('/api/inventory')
              .set('Authorization', fx.admin.auth)
              .send({
                name: clash === 'name' ? name : `${name} ${n}`,
                sku: clash === 'sku' ? name.slice(0, 60) : null,
                quantity: 1,
                price: 1,
                supplierId: fx.supplierId,
              }),
          ),
        );
        expect(answers.map(res => res.status).sort(), clash).to.deep.equal([201, 409, 409, 409]);
      }
    });
  });
});
