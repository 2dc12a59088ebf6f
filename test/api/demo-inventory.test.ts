import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { waitForHistorySettled } from '../support/settle.js';
import { seedDemoInventory } from '../../domain/inventory/seed-demo-inventory.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

interface Item {
  id: string;
  name: string;
  quantity: number;
  price: number;
  supplierName: string;
}
interface Entry {
  change: number;
  quantityBefore: number;
  quantityAfter: number;
  reason: string;
  timestamp: string;
}

describe('Demo inventory data (suppliers, items, three months of history)', () => {
  let user: TestUser;
  let workers: RunningWorkers;
  before(async () => {
    user = await createUser(testApp().services);
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => workers.close());

  it('When seeded twice, then suppliers, items and a consistent history exist once, built by the workers', async () => {
    const { services } = testApp();
    // Another suite may have run the whole demo seed already; either way a second call creates nothing.
    const created = await seedDemoInventory(services.orm.em.fork());
    const counts = await services.orm.em
      .fork()
      .execute<{ events: string }[]>(
        `select count(*) as events from outbox_event where type = 'stock.changed' and payload->>'supplierName' in ('Acme Supplies', 'Globex Trading', 'Initech Parts')`,
      );
    if (created > 0) expect(created).to.equal(3 + 8 + Number(counts[0].events));
    expect(await seedDemoInventory(services.orm.em.fork())).to.be.equal(0);
    await waitForHistorySettled(services, 30000);

    const suppliers = await api()
      .get('/api/suppliers/search?name=initech')
      .set('Authorization', user.auth)
      .expect(200);
    expect(suppliers.body.map((s: { name: string }) => s.name)).to.deep.equal(['Initech Parts']);
    const items = (await api().get('/api/inventory').set('Authorization', user.auth).expect(200))
      .body as Item[];
    const demo = items.filter(i =>
      ['Acme Supplies', 'Globex Trading', 'Initech Parts'].includes(i.supplierName),
    );
    expect(demo).to.have.length(8);

    for (const item of demo) {
      const history = (
        await api().get(`/api/stock-history/item/${item.id}`).set('Authorization', user.auth).expect(200)
      ).body as Entry[];
      const oldestFirst = [...history].reverse();
      expect(oldestFirst[0].reason).to.equal('INITIAL_STOCK');
      for (let i = 1; i < oldestFirst.length; i += 1)
        expect(oldestFirst[i].quantityBefore, item.name).to.equal(oldestFirst[i - 1].quantityAfter);
      expect(oldestFirst[oldestFirst.length - 1].quantityAfter).to.equal(item.quantity);
      const spanDays =
        (Date.parse(oldestFirst[oldestFirst.length - 1].timestamp) - Date.parse(oldestFirst[0].timestamp)) /
        86400000;
      expect(spanDays, item.name).to.be.greaterThan(60);
    }
  });
});
