import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { settleConsumers, recordStockChange } from '../support/stock-events.js';
import { waitForHistorySettled } from '../support/settle.js';
import { waitFor } from '../support/wait-for.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { addDays, utcTodayForTests } from './today.js';

interface Row {
  itemId: string;
  [field: string]: unknown;
}

describe('Replenishment: R1-R3 through the API', function () {
  this.timeout(120000);
  let workers: RunningWorkers;
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    workers = startWorkers(testApp().services, { clock: false });
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
  });
  after(async () => workers.close());

  const adjust = (id: string, delta: number, reason: string) =>
    api()
      .patch(`/api/inventory/${id}/quantity?delta=${delta}&reason=${reason}`)
      .set('Authorization', admin.auth)
      .expect(200);

  /** The replenishment run, waiting (on the status route) until the run has completed; answers its status. */
  async function run(): Promise<Record<string, any>> {
    await settleConsumers(testApp().services);
    const { body } = await api()
      .post('/api/admin/replenishment/run')
      .set('Authorization', admin.auth)
      .expect(202);
    return waitFor(
      async () => {
        const status = (
          await api()
            .get(`/api/admin/replenishment/run/${body.jobId}`)
            .set('Authorization', admin.auth)
            .expect(200)
        ).body;
        if (status.state === 'failed') throw new Error(`run failed: ${JSON.stringify(status.result)}`);
        return status.state === 'completed' ? status : undefined;
      },
      60000,
      'the replenishment run',
    );
  }

  const suggestions = async (query: string, auth = user.auth) =>
    (await api().get(`/api/replenishment/suggestions?${query}`).set('Authorization', auth).expect(200)).body;

  const rowsOf = async (supplierId: string): Promise<Row[]> =>
    (await suggestions(`supplierId=${supplierId}&size=200`)).content;

  it('When no run has been made, then R1 answers computedAt null and an empty page', async () => {
    await testApp().services.orm.em.fork().execute('delete from replenishment_run');
    const page = await suggestions('');
    expect(page.computedAt).to.equal(null);
    expect(page.content).to.deep.equal([]);
    expect(page.totalElements).to.equal(0);
    expect(page.page).to.deep.equal({ size: 50, number: 0, totalElements: 0, totalPages: 0 });
  });

  it("When the contract's worked example is run (R2), then R1 shows its figures and R3 orders them once", async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, supplier.id, {
      quantity: 30,
      price: 2.5,
      minimumQuantity: 0,
    });
    await adjust(item.id, -10, 'SALE');
    const status = await run();
    expect(status.progress).to.equal(100);
    expect(status.result.items).to.be.at.least(1);
    expect(status.startedAt).to.be.a('string');
    expect(status.finishedAt).to.be.a('string');

    const today = utcTodayForTests();
    const page = await suggestions(`supplierId=${supplier.id}`);
    expect(page.computedAt).to.be.a('string');
    expect(page.content).to.deep.equal([
      {
        itemId: item.id,
        itemName: item.name,
        sku: null,
        supplierId: supplier.id,
        supplierName: supplier.name,
        quantity: 20,
        onOrderQuantity: 0,
        inventoryPosition: 20,
        minimumQuantity: 0,
        dailyDemand: 1.4286,
        demandStdDev: 3.4993,
        leadTimeDays: 7,
        serviceLevel: 0.95,
        reorderPoint: 26,
        orderUpToQuantity: 46,
        suggestedQuantity: 26,
        daysOfCover: 14,
        projectedStockoutDate: addDays(today, 14),
        orderByDate: addDays(today, 7),
        unitCost: 2.5,
        suggestedCost: 65,
      },
    ]);
    expect((await suggestions(`supplierId=${supplier.id}&dueWithinDays=6`)).content).to.deep.equal([]);
    expect((await suggestions(`supplierId=${supplier.id}&dueWithinDays=7`)).content).to.have.length(1);

    const created = await api()
      .post('/api/replenishment/draft-orders')
      .set('Authorization', admin.auth)
      .send({ supplierId: supplier.id })
      .expect(201);
    expect(created.body).to.have.length(1);
    expect(created.body[0]).to.include({ status: 'DRAFT', supplierId: supplier.id, totalCost: 65 });
    expect(created.body[0].lines).to.deep.equal([
      {
        itemId: item.id,
        itemName: item.name,
        sku: null,
        quantityOrdered: 26,
        quantityReceived: 0,
        unitCost: 2.5,
        lineTotal: 65,
      },
    ]);
    // The item is on an open (DRAFT) order now: nothing more to order.
    const again = await api()
      .post('/api/replenishment/draft-orders')
      .set('Authorization', admin.auth)
      .send({ supplierId: supplier.id })
      .expect(200);
    expect(again.body).to.deep.equal([]);
  });

  it('When a sale is reversed the same day, then it is no demand; returns and corrections never are', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const reversed = await newItem(api(), admin.auth, supplier.id, { quantity: 30 });
    const corrected = await newItem(api(), admin.auth, supplier.id, { quantity: 30, minimumQuantity: 0 });
    await adjust(reversed.id, -10, 'SALE');
    await waitForHistorySettled(testApp().services, 30000);
    const history = (
      await api().get(`/api/stock-history/item/${reversed.id}`).set('Authorization', admin.auth).expect(200)
    ).body as { id: string; reason: string }[];
    const sale = history.find(e => e.reason === 'SALE')!;
    await api()
      .post(`/api/stock-history/${sale.id}/reverse`)
      .set('Authorization', admin.auth)
      .send({})
      .expect(201);
    await adjust(corrected.id, -9, 'MANUAL_ADJUSTMENT');
    await adjust(corrected.id, -5, 'INVENTORY_COUNT');
    await adjust(corrected.id, 4, 'RETURN');
    await run();
    expect(await rowsOf(supplier.id)).to.deep.equal([]);
    const levels = await testApp()
      .services.orm.em.fork()
      .execute<{ window_demand: string }[]>(
        'select window_demand from replenishment_level where item_id in (?, ?)',
        [reversed.id, corrected.id],
      );
    expect(levels.map(l => Number(l.window_demand))).to.deep.equal([0, 0]);
  });

  it('When a sale is reversed on a later day, then that day loses the units, never below 0', async () => {
    const services = testApp().services;
    const em = services.orm.em.fork();
    const supplier = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, supplier.id, { quantity: 100 });
    const today = utcTodayForTests();
    await em.execute(`update inventory_item set created_at = now() - interval '20 days' where id = ?`, [
      item.id,
    ]);
    const at = (daysAgo: number) => new Date(Date.parse(`${addDays(today, -daysAgo)}T12:00:00Z`));
    // Day -5: 10 sold. Day -3: 4 sold, then 6 of day -5's reversed (the day nets to 0, not -2). Day -2: 7 sold,
    // 3 of them reversed the same day.
    await recordStockChange(em, { itemId: item.id, change: -10, reason: 'SALE', at: at(5) });
    await recordStockChange(em, { itemId: item.id, change: -4, reason: 'SALE', at: at(3) });
    await recordStockChange(em, { itemId: item.id, change: 6, reason: 'SALE', at: at(3) });
    await recordStockChange(em, { itemId: item.id, change: -7, reason: 'SALE', at: at(2) });
    await recordStockChange(em, { itemId: item.id, change: 3, reason: 'SALE', at: at(2) });
    await run();
    const [level] = await em.execute<
      { window_days: number; window_demand: string; sum_of_squares: string }[]
    >('select window_days, window_demand, sum_of_squares from replenishment_level where item_id = ?', [
      item.id,
    ]);
    expect(level.window_days).to.equal(21);
    expect(Number(level.window_demand)).to.equal(10 + 0 + 4);
    expect(Number(level.sum_of_squares)).to.equal(100 + 16);
  });

  it('When an order is placed after the run, then R1 counts it at once; other suppliers never show', async () => {
    const em = testApp().services.orm.em.fork();
    const supplier = await newSupplier(api(), admin.auth);
    const other = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, supplier.id, { quantity: 30 });
    const foreign = await newItem(api(), admin.auth, other.id, { quantity: 30 });
    await adjust(item.id, -10, 'SALE');
    await adjust(foreign.id, -10, 'SALE');
    await run();
    const ownRows = await rowsOf(supplier.id);
    expect(ownRows.map(r => r.itemId)).to.deep.equal([item.id]);
    const [row] = ownRows;
    expect(row).to.include({ itemId: item.id, suggestedQuantity: 26, onOrderQuantity: 0 });
    expect((await rowsOf(other.id)).map(r => r.itemId)).to.deep.equal([foreign.id]);
    // What an ORDERED order still brings (placing an order adds it to the item in its transaction).
    await em.execute('update inventory_item set on_order_quantity = 5 where id = ?', [item.id]);
    const [after] = await rowsOf(supplier.id);
    expect(after).to.include({ onOrderQuantity: 5, inventoryPosition: 25, suggestedQuantity: 21 });
    await em.execute('update inventory_item set on_order_quantity = 7 where id = ?', [item.id]);
    expect(await rowsOf(supplier.id)).to.deep.equal([]);
    await em.execute('update inventory_item set on_order_quantity = 0 where id = ?', [item.id]);
    // Received: stock up, nothing on order, above the reorder point: no row.
    await adjust(item.id, 20, 'RESTOCK');
    expect(await rowsOf(supplier.id)).to.deep.equal([]);
  });

  it('When an order is placed (P5) and received (P6) after the run, then R1 shows each step at once', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const item = await newItem(api(), admin.auth, supplier.id, { quantity: 30 });
    await adjust(item.id, -10, 'SALE');
    await run();
    const today = utcTodayForTests();
    expect(await rowsOf(supplier.id)).to.have.length(1);
    const order = async (quantity: number) => {
      const created = await api()
        .post('/api/purchase-orders')
        .set('Authorization', admin.auth)
        .send({ supplierId: supplier.id, lines: [{ itemId: item.id, quantity }] })
        .expect(201);
      await api()
        .post(`/api/purchase-orders/${created.body.id}/order`)
        .set('Authorization', admin.auth)
        .expect(200);
      return created.body.id as string;
    };
    const placed = await order(5);
    expect((await rowsOf(supplier.id))[0]).to.include({
      quantity: 20,
      onOrderQuantity: 5,
      inventoryPosition: 25,
      reorderPoint: 26,
      suggestedQuantity: 21,
      daysOfCover: 14,
    });
    await api()
      .post(`/api/purchase-orders/${placed}/receipts`)
      .set('Authorization', user.auth)
      .send({ lines: [{ itemId: item.id, quantity: 5 }] })
      .expect(201);
    // Received: in stock now, no longer on order; more days of cover, a later order-by date.
    expect((await rowsOf(supplier.id))[0]).to.include({
      quantity: 25,
      onOrderQuantity: 0,
      inventoryPosition: 25,
      suggestedQuantity: 21,
      daysOfCover: 17,
      orderByDate: addDays(today, 10),
    });
    await order(2);
    expect(await rowsOf(supplier.id)).to.deep.equal([]);
  });

  it('When dated and undated rows are paged, then dated come first by order-by date, the rest by name', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const tag = supplier.id.slice(0, 8);
    const dated = await newItem(api(), admin.auth, supplier.id, { name: `Zed ${tag}`, quantity: 30 });
    // Own reorder point, no demand: no order-by date.
    const undated = await newItem(api(), admin.auth, supplier.id, {
      name: `Bee ${tag}`,
      quantity: 3,
      reorderPoint: 5,
    });
    // Demand, but its stock outlasts 9999-12-30 (500,000 x 7 / 1 days of cover): no order-by date either.
    const far = await newItem(api(), admin.auth, supplier.id, {
      name: `Ant ${tag}`,
      quantity: 500_001,
      reorderPoint: 999_000,
    });
    await adjust(dated.id, -10, 'SALE');
    await adjust(far.id, -1, 'SALE');
    await run();
    const ids = async (query: string) => {
      const page = await suggestions(`supplierId=${supplier.id}&${query}`);
      return { total: page.totalElements, ids: (page.content as Row[]).map(r => r.itemId) };
    };
    expect(await ids('size=200')).to.deep.equal({ total: 3, ids: [dated.id, far.id, undated.id] });
    const [, farRow] = (await suggestions(`supplierId=${supplier.id}`)).content;
    expect(farRow).to.include({ daysOfCover: 3_500_000, projectedStockoutDate: null, orderByDate: null });
    expect(await ids('size=1&page=0')).to.deep.equal({ total: 3, ids: [dated.id] });
    expect(await ids('size=1&page=1')).to.deep.equal({ total: 3, ids: [far.id] });
    expect(await ids('size=1&page=2')).to.deep.equal({ total: 3, ids: [undated.id] });
    expect(await ids('size=2&page=1')).to.deep.equal({ total: 3, ids: [undated.id] });
    expect(await ids('size=2&page=2')).to.deep.equal({ total: 3, ids: [] });
    expect(await ids('dueWithinDays=365')).to.deep.equal({ total: 1, ids: [dated.id] });
    // Every supplier: the same rows among the others, in the same order.
    const all: Row[] = [];
    for (let page = 0; ; page++) {
      const { content } = await suggestions(`size=200&page=${page}`);
      all.push(...content);
      if (content.length < 200) break;
    }
    expect(all.map(r => r.itemId).filter(id => [dated.id, far.id, undated.id].includes(id))).to.deep.equal([
      dated.id,
      far.id,
      undated.id,
    ]);
  });

  /** Items of `supplierId` written in SQL (many at once): own levels, so each is due without a run's demand. */
  async function dueItems(
    supplierId: string,
    items: { name: string; price: string; orderUpTo: number }[],
  ): Promise<string[]> {
    const rows = await testApp()
      .services.orm.em.fork()
      .execute<{ id: string; name: string }[]>(
        `insert into inventory_item (name, quantity, price, supplier_id, created_by, reorder_point, order_up_to_quantity)
         select x.name, 0, x.price::numeric, ?, 'test', x.out - 1, x.out
         from json_to_recordset(?::json) as x(name text, price text, out int)
         returning id, name`,
        [supplierId, JSON.stringify(items.map(i => ({ name: i.name, price: i.price, out: i.orderUpTo })))],
      );
    const byName = new Map(rows.map(r => [r.name, r.id]));
    return items.map(i => byName.get(i.name)!);
  }

  const draftOrders = async (supplierId: string, status: number) =>
    (
      await api()
        .post('/api/replenishment/draft-orders')
        .set('Authorization', admin.auth)
        .send({ supplierId })
        .expect(status)
    ).body as { lines: { itemId: string }[]; totalCost: number }[];

  it('When more than 500 items of a supplier are due, then R3 writes orders of at most 500 lines', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const names = Array.from(
      { length: 501 },
      (_, n) => `Bulk ${supplier.id.slice(0, 8)} ${String(n).padStart(3, '0')}`,
    );
    const ids = await dueItems(
      supplier.id,
      names.map(name => ({ name, price: '1.00', orderUpTo: 2 })),
    );
    await run();
    const orders = await draftOrders(supplier.id, 201);
    // The suggestions's order (undated rows by name): the first 500 on the first order, the last on the second.
    expect(orders.map(o => o.lines.map(l => l.itemId))).to.deep.equal([ids.slice(0, 500), ids.slice(500)]);
    expect(orders.map(o => o.totalCost)).to.deep.equal([1000, 2]);
  });

  it('When the lines would pass the order total cap, then R3 starts another order; a line above it alone is left out', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const tag = supplier.id.slice(0, 8);
    // 10,000,000.00 each: 4,000 units are 40,000,000,000.00; the cap is 99,999,999,999.99.
    const [a, b, c, d] = await dueItems(supplier.id, [
      { name: `A ${tag}`, price: '10000000.00', orderUpTo: 4000 },
      { name: `B ${tag}`, price: '10000000.00', orderUpTo: 4000 },
      { name: `C ${tag}`, price: '10000000.00', orderUpTo: 6000 },
      { name: `D ${tag}`, price: '10000000.00', orderUpTo: 10_000 },
    ]);
    await run();
    const orders = await draftOrders(supplier.id, 201);
    expect(orders.map(o => o.lines.map(l => l.itemId))).to.deep.equal([[a, b], [c]]);
    expect(orders.map(o => o.totalCost)).to.deep.equal([80_000_000_000, 60_000_000_000]);
    // D alone (100,000,000,000.00) fits no order: still suggested (the suggestions shows DRAFT lines nowhere), on no order.
    expect((await rowsOf(supplier.id)).map(r => r.itemId)).to.deep.equal([a, b, c, d]);
    expect(await draftOrders(supplier.id, 200)).to.deep.equal([]);
  });

  it('When two R3 calls race for one supplier, then each item lands on at most one open order', async () => {
    const supplier = await newSupplier(api(), admin.auth);
    const items = [];
    for (let i = 0; i < 6; i++) {
      const item = await newItem(api(), admin.auth, supplier.id, { quantity: 30 });
      await adjust(item.id, -10, 'SALE');
      items.push(item);
    }
    await run();
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() =>
        api()
          .post('/api/replenishment/draft-orders')
          .set('Authorization', admin.auth)
          .send({ supplierId: supplier.id }),
      ),
    );
    expect(answers.map(a => a.status).sort()).to.deep.equal([200, 200, 200, 201]);
    const lines = await testApp()
      .services.orm.em.fork()
      .execute<{ item_id: string; n: string }[]>(
        `select l.item_id, count(*) as n from purchase_order_line l join purchase_order o on o.id = l.purchase_order_id
         where o.supplier_id = ? and o.status in ('DRAFT', 'ORDERED', 'PARTIALLY_RECEIVED') group by l.item_id`,
        [supplier.id],
      );
    expect(lines.map(l => Number(l.n))).to.deep.equal(items.map(() => 1));
    expect(lines.map(l => l.item_id).sort()).to.deep.equal(items.map(i => i.id).sort());
  });

  it('When a report rebuild finishes, then a replenishment run follows it', async () => {
    const { body } = await api()
      .post('/api/admin/reports/rebuild')
      .set('Authorization', admin.auth)
      .expect(202);
    const runId = `replenishment-after-${body.jobId}`;
    await waitFor(
      async () => {
        const res = await api().get(`/api/admin/replenishment/run/${runId}`).set('Authorization', admin.auth);
        return res.status === 200 && res.body.state === 'completed';
      },
      60000,
      'the run after the rebuild',
    );
  });

  it('When R3 names an unknown supplier, then 404; R1 is for every signed-in user, R2 and R3 for admins', async () => {
    await api()
      .post('/api/replenishment/draft-orders')
      .set('Authorization', admin.auth)
      .send({ supplierId: '00000000-0000-4000-8000-000000000999' })
      .expect(404);
    const de = await api()
      .post('/api/replenishment/draft-orders?lang=de')
      .set('Authorization', admin.auth)
      .send({ supplierId: 'nope' })
      .expect(404);
    expect(de.body.message).to.be.a('string');
    await api().get('/api/replenishment/suggestions').expect(401);
    await api().post('/api/admin/replenishment/run').set('Authorization', user.auth).expect(403);
    await api().post('/api/replenishment/draft-orders').set('Authorization', user.auth).send({}).expect(403);
    await api()
      .get('/api/admin/replenishment/run/replenishment-none')
      .set('Authorization', admin.auth)
      .expect(404);
    await api().get('/api/admin/replenishment/run/other-1').set('Authorization', admin.auth).expect(404);
    const bad = await api()
      .get('/api/replenishment/suggestions?size=201')
      .set('Authorization', user.auth)
      .expect(400);
    expect(bad.body.message).to.equal('page size must be between 1 and 200');
    await api()
      .get('/api/replenishment/suggestions?dueWithinDays=0')
      .set('Authorization', user.auth)
      .expect(400);
  });
});
