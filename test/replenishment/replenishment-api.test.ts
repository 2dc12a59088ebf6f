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

  /** R2, waiting (on the status route) until the run has completed; answers its status. */
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
    const [row] = await rowsOf(supplier.id);
    expect(row).to.include({ itemId: item.id, suggestedQuantity: 26, onOrderQuantity: 0 });
    expect((await rowsOf(other.id)).map(r => r.itemId)).to.deep.equal([foreign.id]);
    // What an ORDERED order still brings (P5 adds it to the item in its transaction).
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
