import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const MISSING = '00000000-0000-4000-8000-000000000000';

describe('Purchase orders and receipts (P1-P9)', () => {
  let admin: TestUser;
  let user: TestUser;
  let workers: RunningWorkers;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => workers.close());

  const item = async (id: string) =>
    (await api().get(`/api/inventory/${id}`).set('Authorization', user.auth).expect(200)).body;
  const sql = <T>(text: string, params: unknown[] = []) =>
    testApp().services.orm.em.fork().execute<T[]>(text, params);

  /** A supplier with two items (quantities 10 and 0, prices 2.50 and 4.00). */
  async function setUp() {
    const supplier = await newSupplier(api(), admin.auth, { leadTimeDays: 3 });
    const a = await newItem(api(), admin.auth, supplier.id, { quantity: 10, price: 2.5 });
    const b = await newItem(api(), admin.auth, supplier.id, { quantity: 0, price: 4 });
    return { supplier, a, b };
  }

  async function draft(supplierId: string, lines: unknown[], auth = admin.auth) {
    return api().post('/api/purchase-orders').set('Authorization', auth).send({ supplierId, lines });
  }

  async function ordered(supplierId: string, lines: unknown[]) {
    const created = await draft(supplierId, lines);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const res = await api()
      .post(`/api/purchase-orders/${created.body.id}/order`)
      .set('Authorization', admin.auth)
      .expect(200);
    return res.body;
  }

  const receive = (orderId: string, lines: unknown[], auth = user.auth) =>
    api().post(`/api/purchase-orders/${orderId}/receipts`).set('Authorization', auth).send({ lines });

  describe('item and supplier fields', () => {
    it('When an item PUT leaves out reorderPoint/orderUpToQuantity (as the reference clients do), then they are kept; null resets; orderUpTo must stay above the stored reorder point', async () => {
      const supplier = await newSupplier(api(), admin.auth, { leadTimeDays: 12 });
      const created = await newItem(api(), admin.auth, supplier.id, {
        reorderPoint: 5,
        orderUpToQuantity: 20,
      });
      expect(created).to.include({ reorderPoint: 5, orderUpToQuantity: 20, onOrderQuantity: 0 });
      const reference = {
        name: created.name,
        quantity: 10,
        price: 2.5,
        supplierId: supplier.id,
        minimumQuantity: 1,
      };
      const kept = await api()
        .put(`/api/inventory/${created.id}`)
        .set('Authorization', admin.auth)
        .send(reference)
        .expect(200);
      expect(kept.body).to.include({ reorderPoint: 5, orderUpToQuantity: 20, version: 2 });
      const refused = await api()
        .put(`/api/inventory/${created.id}`)
        .set('Authorization', admin.auth)
        .send({ ...reference, orderUpToQuantity: 5 })
        .expect(400);
      expect(refused.body.fieldErrors).to.have.property('orderUpToQuantity');
      await api()
        .put(`/api/inventory/${created.id}`)
        .set('Authorization', admin.auth)
        .set('Accept-Language', 'de')
        .send({ ...reference, reorderPoint: 30 })
        .expect(400);
      const reset = await api()
        .put(`/api/inventory/${created.id}`)
        .set('Authorization', admin.auth)
        .send({ ...reference, reorderPoint: null })
        .expect(200);
      expect(reset.body).to.include({ reorderPoint: null, orderUpToQuantity: 20, version: 3 });
      const changes = await sql<{ reorder_point: number | null; version: number }>(
        'select reorder_point, version from item_change where item_id = ? order by version',
        [created.id],
      );
      expect(changes.map(c => [c.version, c.reorder_point])).to.deep.equal([
        [1, 5],
        [2, 5],
        [3, null],
      ]);

      const supplierPut = await api()
        .put(`/api/suppliers/${supplier.id}`)
        .set('Authorization', admin.auth)
        .send({ name: supplier.name, email: 'x@example.test' })
        .expect(200);
      expect(supplierPut.body.leadTimeDays).to.equal(12);
      const supplierReset = await api()
        .put(`/api/suppliers/${supplier.id}`)
        .set('Authorization', admin.auth)
        .send({ name: supplier.name, leadTimeDays: null })
        .expect(200);
      expect(supplierReset.body.leadTimeDays).to.equal(null);
      await api()
        .put(`/api/suppliers/${supplier.id}`)
        .set('Authorization', admin.auth)
        .send({ name: supplier.name, leadTimeDays: 366 })
        .expect(400);
    });
  });

  describe('order, partial receipt, cancel', () => {
    it('When an order is placed, partly received and cancelled, then onOrderQuantity follows, received stock stays and the receipt entries carry cost and order', async () => {
      const { supplier, a, b } = await setUp();
      const created = await draft(supplier.id, [
        { itemId: a.id, quantity: 5, unitCost: 1.75 },
        { itemId: b.id, quantity: 8 },
      ]);
      expect(created.status).to.equal(201);
      expect(created.headers.location).to.equal(`/api/purchase-orders/${created.body.id}`);
      expect(created.body).to.include({
        status: 'DRAFT',
        totalCost: 40.75,
        version: 1,
        supplierName: supplier.name,
      });
      expect(created.body.number).to.match(/^PO-\d{6,}$/);
      expect(created.body.lines.find((l: { itemId: string }) => l.itemId === b.id)).to.include({
        unitCost: 4,
        lineTotal: 32,
        quantityReceived: 0,
      });

      const placed = await api()
        .post(`/api/purchase-orders/${created.body.id}/order`)
        .set('Authorization', admin.auth)
        .set('If-Match', '"1"')
        .expect(200);
      expect(placed.body.status).to.equal('ORDERED');
      expect(placed.headers.etag).to.equal('"2"');
      const expected = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
      expect(placed.body.expectedAt).to.equal(expected);
      expect((await item(a.id)).onOrderQuantity).to.equal(5);
      expect((await item(b.id)).onOrderQuantity).to.equal(8);
      const versionBefore = (await item(a.id)).version;

      const receipt = await receive(created.body.id, [{ itemId: a.id, quantity: 2 }]).expect(201);
      expect(receipt.headers.location).to.equal(
        `/api/purchase-orders/${created.body.id}/receipts/${receipt.body.id}`,
      );
      const afterReceipt = await item(a.id);
      expect(afterReceipt).to.include({
        quantity: 12,
        onOrderQuantity: 3,
        price: 2.5,
        version: versionBefore + 1,
      });
      const order = (
        await api().get(`/api/purchase-orders/${created.body.id}`).set('Authorization', user.auth).expect(200)
      ).body;
      expect(order.status).to.equal('PARTIALLY_RECEIVED');

      await waitForHistorySettled(testApp().services);
      const entryId = receipt.body.lines[0].entryId;
      const entry = (
        await api().get(`/api/stock-history/${entryId}`).set('Authorization', user.auth).expect(200)
      ).body;
      expect(entry).to.include({
        reason: 'RESTOCK',
        change: 2,
        quantityAfter: 12,
        unitCost: 1.75,
        purchaseOrderId: created.body.id,
      });
      const reversal = await api()
        .post(`/api/stock-history/${entryId}/reverse`)
        .set('Authorization', admin.auth)
        .send({})
        .expect(409);
      expect(reversal.body.message).to.match(/RETURNED_TO_SUPPLIER/);

      const cancelled = await api()
        .post(`/api/purchase-orders/${created.body.id}/cancel`)
        .set('Authorization', admin.auth)
        .expect(200);
      expect(cancelled.body).to.include({ status: 'CANCELLED' });
      expect(await item(a.id)).to.include({ quantity: 12, onOrderQuantity: 0 });
      expect(await item(b.id)).to.include({ quantity: 0, onOrderQuantity: 0 });

      const receipts = await api()
        .get(`/api/purchase-orders/${created.body.id}/receipts`)
        .set('Authorization', user.auth)
        .expect(200);
      expect(receipts.body).to.have.length(1);
      await api()
        .get(`/api/purchase-orders/${created.body.id}/receipts/${receipt.body.id}`)
        .set('Authorization', user.auth)
        .expect(200);
      const list = await api()
        .get(`/api/purchase-orders?status=CANCELLED&status=RECEIVED&itemId=${a.id}`)
        .set('Authorization', user.auth)
        .expect(200);
      expect(list.body.content.map((o: { id: string }) => o.id)).to.deep.equal([created.body.id]);
      const csv = await api()
        .get(`/api/purchase-orders/${created.body.id}/export.csv?delimiter=;`)
        .set('Authorization', user.auth)
        .expect(200);
      expect(csv.text).to.contain('orderNumber;supplier;expectedAt;sku;name;quantity;unitCost;lineTotal');
    });

    it('When every line is received, then RECEIVED with receivedAt', async () => {
      const { supplier, a } = await setUp();
      const order = await ordered(supplier.id, [{ itemId: a.id, quantity: 4 }]);
      await receive(order.id, [{ itemId: a.id, quantity: 4 }]).expect(201);
      const after = (await api().get(`/api/purchase-orders/${order.id}`).set('Authorization', user.auth))
        .body;
      expect(after.status).to.equal('RECEIVED');
      expect(after.receivedAt).to.be.a('string');
      expect(await item(a.id)).to.include({ quantity: 14, onOrderQuantity: 0 });
    });
  });

  describe('rule order per endpoint', () => {
    it('P2: 400 -> 404 supplier -> 404 item -> 409 item of another supplier; total cap 400', async () => {
      const { supplier, a } = await setUp();
      const other = await newSupplier(api(), admin.auth);
      const foreign = await newItem(api(), admin.auth, other.id);
      const duplicate = await draft(MISSING, [
        { itemId: a.id, quantity: 1 },
        { itemId: a.id, quantity: 2 },
      ]);
      expect(duplicate.status).to.equal(400);
      expect((await draft(supplier.id, [])).status).to.equal(400);
      expect((await draft(MISSING, [{ itemId: MISSING, quantity: 1 }])).status).to.equal(404);
      const noItem = await draft(supplier.id, [{ itemId: MISSING, quantity: 1 }]);
      expect(noItem.status).to.equal(404);
      expect(noItem.body.message).to.equal('The requested resource was not found');
      expect((await draft(supplier.id, [{ itemId: foreign.id, quantity: 1 }])).status).to.equal(409);
      const cap = await draft(MISSING, [{ itemId: a.id, quantity: 999999, unitCost: 10000000 }]);
      expect(cap.status).to.equal(400);
      expect((await draft(supplier.id, [{ itemId: a.id, quantity: 1 }], user.auth)).status).to.equal(403);
    });

    it('P4: 404 -> 412 -> 409 unless DRAFT -> the rules of P2', async () => {
      const { supplier, a, b } = await setUp();
      const created = (await draft(supplier.id, [{ itemId: a.id, quantity: 1 }])).body;
      const put = (id: string, body: object, version?: string) => {
        const req = api().put(`/api/purchase-orders/${id}`).set('Authorization', admin.auth);
        return (version ? req.set('If-Match', version) : req).send(body);
      };
      expect((await put(MISSING, { lines: [] }, '"9"')).status).to.equal(404);
      expect((await put(created.id, { lines: [] }, '"9"')).status).to.equal(412);
      const updated = await put(
        created.id,
        { supplierId: supplier.id, lines: [{ itemId: b.id, quantity: 3 }] },
        '"1"',
      );
      expect(updated.status).to.equal(200);
      expect(updated.body.lines.map((l: { itemId: string }) => l.itemId)).to.deep.equal([b.id]);
      expect(updated.body.version).to.equal(2);
      await api()
        .post(`/api/purchase-orders/${created.id}/order`)
        .set('Authorization', admin.auth)
        .expect(200);
      expect((await put(created.id, { lines: [] })).status).to.equal(409);
    });

    it('P5 and P7: 404 -> 412 -> 409; P5 refuses a line whose item was deleted', async () => {
      const { supplier, a, b } = await setUp();
      const created = (
        await draft(supplier.id, [
          { itemId: b.id, quantity: 1 },
          { itemId: a.id, quantity: 1 },
        ])
      ).body;
      for (const action of ['order', 'cancel']) {
        await api()
          .post(`/api/purchase-orders/${MISSING}/${action}`)
          .set('Authorization', admin.auth)
          .expect(404);
        await api()
          .post(`/api/purchase-orders/${created.id}/${action}`)
          .set('Authorization', admin.auth)
          .set('If-Match', '"7"')
          .expect(412);
      }
      await api()
        .delete(`/api/inventory/${b.id}?reason=SCRAPPED`)
        .set('Authorization', admin.auth)
        .expect(204);
      const refused = await api()
        .post(`/api/purchase-orders/${created.id}/order`)
        .set('Authorization', admin.auth)
        .expect(409);
      expect(refused.body.message).to.contain(b.id);
      expect((await item(a.id)).onOrderQuantity).to.equal(0);
      await api()
        .post(`/api/purchase-orders/${created.id}/cancel`)
        .set('Authorization', admin.auth)
        .expect(200);
      await api()
        .post(`/api/purchase-orders/${created.id}/cancel`)
        .set('Authorization', admin.auth)
        .expect(409);
      await api()
        .post(`/api/purchase-orders/${created.id}/order`)
        .set('Authorization', admin.auth)
        .expect(409);
    });

    it('P6: 400 -> 404 -> 409 status -> 400 item not on order -> 409 over (open quantity named) -> 422 above the maximum, nothing written', async () => {
      const { supplier, a, b } = await setUp();
      const other = await newItem(api(), admin.auth, supplier.id);
      await receive(MISSING, []).expect(400);
      await receive(MISSING, [{ itemId: a.id, quantity: 1 }]).expect(404);
      const created = (
        await draft(supplier.id, [
          { itemId: a.id, quantity: 5 },
          { itemId: b.id, quantity: 2 },
        ])
      ).body;
      await receive(created.id, [{ itemId: a.id, quantity: 1 }]).expect(409);
      await api()
        .post(`/api/purchase-orders/${created.id}/order`)
        .set('Authorization', admin.auth)
        .expect(200);
      await receive(created.id, [{ itemId: other.id, quantity: 1 }]).expect(400);
      const over = await receive(created.id, [{ itemId: a.id, quantity: 6 }]).expect(409);
      expect(over.body.message).to.contain('5');
      const de = await receive(created.id, [{ itemId: a.id, quantity: 6 }])
        .set('Accept-Language', 'de')
        .expect(409);
      expect(de.body.message).to.contain('erwartet');
      await sql('update inventory_item set quantity = 999998 where id = ?', [a.id]);
      await receive(created.id, [
        { itemId: b.id, quantity: 1 },
        { itemId: a.id, quantity: 2 },
      ]).expect(422);
      expect(await item(b.id)).to.include({ quantity: 0, onOrderQuantity: 2 });
      expect(await item(a.id)).to.include({ quantity: 999998, onOrderQuantity: 5 });
      await receive(created.id, [{ itemId: a.id, quantity: 1 }], admin.auth).expect(201);
    });
  });

  describe('deletes and roles', () => {
    it('When an item is still on order, its delete is 409 (after 404, before the stock check); a supplier with orders cannot be deleted', async () => {
      const { supplier, b } = await setUp();
      await ordered(supplier.id, [{ itemId: b.id, quantity: 2 }]);
      const res = await api()
        .delete(`/api/inventory/${b.id}?reason=SCRAPPED`)
        .set('Authorization', admin.auth)
        .expect(409);
      expect(res.body.message).to.match(/on order/);
      await api()
        .delete(`/api/inventory/${MISSING}?reason=SCRAPPED`)
        .set('Authorization', admin.auth)
        .expect(404);
      const lonely = await newSupplier(api(), admin.auth);
      const only = await newItem(api(), admin.auth, lonely.id, { quantity: 0 });
      const order = (await draft(lonely.id, [{ itemId: only.id, quantity: 1 }])).body;
      await api()
        .delete(`/api/inventory/${only.id}?reason=SCRAPPED`)
        .set('Authorization', admin.auth)
        .expect(204);
      await api().delete(`/api/suppliers/${lonely.id}`).set('Authorization', admin.auth).expect(409);
      expect(order.status).to.equal('DRAFT');
    });

    it('When a USER acts, then only receiving is allowed; anonymous callers get 401', async () => {
      const { supplier, a } = await setUp();
      const order = await ordered(supplier.id, [{ itemId: a.id, quantity: 3 }]);
      for (const [method, path] of [
        ['post', '/api/purchase-orders'],
        ['put', `/api/purchase-orders/${order.id}`],
        ['post', `/api/purchase-orders/${order.id}/order`],
        ['post', `/api/purchase-orders/${order.id}/cancel`],
      ] as const)
        await api()[method](path).set('Authorization', user.auth).send({}).expect(403);
      await receive(order.id, [{ itemId: a.id, quantity: 1 }], user.auth).expect(201);
      await api().get('/api/purchase-orders').expect(401);
    });
  });

  describe('idempotency and races', () => {
    it('When the same receipt is repeated with one Idempotency-Key, then the stock is added once', async () => {
      const { supplier, a } = await setUp();
      const order = await ordered(supplier.id, [{ itemId: a.id, quantity: 5 }]);
      const send = () =>
        receive(order.id, [{ itemId: a.id, quantity: 2 }]).set('Idempotency-Key', `receipt-${order.id}`);
      const first = await send().expect(201);
      const again = await send().expect(201);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body.id).to.equal(first.body.id);
      expect(await item(a.id)).to.include({ quantity: 12, onOrderQuantity: 3 });
    });

    it('When two receipts race for the last open quantity of a line, then one 201 and one 409, never over-received', async () => {
      const { supplier, a } = await setUp();
      for (let round = 0; round < 5; round++) {
        const order = await ordered(supplier.id, [{ itemId: a.id, quantity: 3 }]);
        const before = await item(a.id);
        const answers = await Promise.all([
          receive(order.id, [{ itemId: a.id, quantity: 3 }]),
          receive(order.id, [{ itemId: a.id, quantity: 2 }]),
        ]);
        expect(answers.map(r => r.status).sort()).to.deep.equal([201, 409]);
        const won = answers.find(r => r.status === 201)!.body.lines[0].quantity as number;
        const after = await item(a.id);
        expect(after.quantity - before.quantity).to.equal(won);
        expect(after.onOrderQuantity).to.equal(3 - won);
        const [line] = await sql<{ quantity_received: number }>(
          'select quantity_received from purchase_order_line where purchase_order_id = ?',
          [order.id],
        );
        expect(line.quantity_received).to.equal(won);
        // A fully received order cannot be cancelled; a partly received one leaves nothing on order.
        await api()
          .post(`/api/purchase-orders/${order.id}/cancel`)
          .set('Authorization', admin.auth)
          .expect(won === 3 ? 409 : 200);
      }
    });
  });
});
