import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { waitForHistorySettled, waitForItemConsumersDone } from '../support/settle.js';
import { seedDemoInventory } from '../../domain/inventory/seed-demo-inventory.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const DEMO_SUPPLIERS = ['Acme Supplies', 'Globex Trading', 'Initech Parts'];
const DAY_MS = 86400000;
const day = (offset: number) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);

interface Item {
  id: string;
  name: string;
  supplierId: string;
  supplierName: string;
  quantity: number;
  minimumQuantity: number;
}

/** Issue 13: after seeding on an empty database every analytics chart and low-stock list has content. */
describe('Demo data on every chart (price changes, items below their minimum)', () => {
  let admin: TestUser;
  let workers: RunningWorkers;
  let demo: Item[];

  before(async function () {
    this.timeout(60000);
    const { services } = testApp();
    admin = await createUser(services, 'ROLE_ADMIN', 'admin');
    workers = startWorkers(services, { clock: false });
    await seedDemoInventory(services.orm.em.fork());
    await waitForHistorySettled(services, 30000);
    const items = (await get('/api/inventory')).body as Item[];
    demo = items.filter(i => DEMO_SUPPLIERS.includes(i.supplierName));
    expect(demo).to.have.length(8);
    await waitForItemConsumersDone(
      services.orm.em.fork(),
      demo.map(i => i.id),
      30000,
      'analytics and alerts of the demo items',
    );
  });
  after(async () => workers.close());

  const get = (url: string) => api().get(url).set('Authorization', admin.auth).expect(200);
  const supplierIds = () => [...new Set(demo.map(i => i.supplierId))];

  it('When the demo history is listed, then PRICE_CHANGE entries exist on at least four items', async () => {
    const entries = (await get('/api/stock-history/reason/PRICE_CHANGE')).body as {
      itemId: string;
      change: number;
      supplierName: string;
    }[];
    const demoEntries = entries.filter(e => DEMO_SUPPLIERS.includes(e.supplierName));
    expect(new Set(demoEntries.map(e => e.itemId)).size).to.be.at.least(4);
    for (const e of demoEntries) expect(e.change).to.equal(0);
  });

  it('When the price trends are asked, then half the demo items move over 90 days and at least two in the last 30', async () => {
    const moving = async (from: number) => {
      let count = 0;
      for (const item of demo) {
        const trend = (
          await get(`/api/analytics/price-trend?itemId=${item.id}&start=${day(from)}&end=${day(0)}`)
        ).body as { price: number }[];
        if (new Set(trend.map(p => p.price)).size >= 2) count += 1;
      }
      return count;
    };
    expect(await moving(-95)).to.be.at.least(4);
    expect(await moving(-30)).to.be.at.least(2);
  });

  it('When low stock is asked, then the count, the per-supplier list, the summary and the open alerts show demo items', async () => {
    const below = demo.filter(i => i.quantity < i.minimumQuantity);
    expect(below.length).to.be.at.least(1);
    expect((await get('/api/analytics/low-stock/count')).body).to.be.at.least(below.length);
    const lists = await Promise.all(
      supplierIds().map(
        async id => (await get(`/api/analytics/low-stock-items?supplierId=${id}`)).body as unknown[],
      ),
    );
    expect(lists.flat().length).to.be.at.least(1);
    const summary = (await get('/api/analytics/summary')).body as { lowStockItems: unknown[] };
    expect(summary.lowStockItems.length).to.be.at.least(1);
    const alerts = (await get('/api/alerts/low-stock')).body as { itemId: string }[];
    for (const item of below) expect(alerts.map(a => a.itemId)).to.include(item.id);
  });

  it('When the other charts are asked for the demo period, then each has content', async () => {
    const range = `start=${day(-95)}&end=${day(0)}`;
    const value = (await get(`/api/analytics/stock-value?${range}`)).body as { totalValue: number }[];
    expect(new Set(value.map(p => p.totalValue)).size, 'stock value moves').to.be.greaterThan(1);
    const movement = (await get(`/api/analytics/monthly-stock-movement?${range}`)).body as {
      stockIn: number;
      stockOut: number;
    }[];
    expect(movement.some(m => m.stockIn > 0) && movement.some(m => m.stockOut > 0)).to.equal(true);
    const perSupplier = (await get('/api/analytics/stock-per-supplier')).body as { supplierName: string }[];
    expect(perSupplier.map(s => s.supplierName)).to.include.members(DEMO_SUPPLIERS);
    for (const id of supplierIds())
      expect((await get(`/api/analytics/item-update-frequency?supplierId=${id}`)).body).not.to.have.length(0);
    expect((await get('/api/analytics/reason-breakdown')).body).not.to.have.length(0);
    expect((await get('/api/analytics/stock-updates')).body).not.to.have.length(0);
    expect((await get('/api/analytics/by-employee')).body).not.to.have.length(0);
    expect((await get('/api/analytics/employee-changes?createdBy=admin')).body.content).not.to.have.length(0);
    const financial = (await get(`/api/analytics/financial/summary?from=${day(-60)}&to=${day(0)}`)).body as {
      cogsQty: number;
      purchasesQty: number;
      endingValue: number;
    };
    expect(financial.cogsQty).to.be.greaterThan(0);
    expect(financial.purchasesQty).to.be.greaterThan(0);
    expect(financial.endingValue).to.be.greaterThan(0);
  });
});
