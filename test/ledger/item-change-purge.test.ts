import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { createUser, type TestUser } from '../support/users.js';
import { runJob } from '../support/run-job.js';
import { startWorkers } from '../../workers/main.js';
import { ITEM_CHANGE_RETENTION_DAYS } from '../../domain/inventory/purge-item-changes.js';

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

describe('The daily cleanup purges item-change records past their retention', function () {
  this.timeout(60000);
  let admin: TestUser;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
  });

  it('When the housekeeping job runs, then asOf 10 days ago still answers for an item last changed 40 days ago, and what no read needs is gone', async () => {
    const { services } = testApp();
    const em = () => services.orm.em.fork();
    const supplier = await newSupplier(api(), admin.auth);
    const old = await newItem(api(), admin.auth, supplier.id, { quantity: 5 });
    await api()
      .put(`/api/inventory/${old.id}`)
      .set('Authorization', admin.auth)
      .send({ name: old.name, quantity: 8, price: 3.5, supplierId: supplier.id })
      .expect(200);
    const gone = await newItem(api(), admin.auth, supplier.id, { quantity: 0 });
    await api()
      .delete(`/api/inventory/${gone.id}?reason=SCRAPPED`)
      .set('Authorization', admin.auth)
      .expect(204);
    const recent = await newItem(api(), admin.auth, supplier.id, { quantity: 2 });
    // Move the first two items' records into the past: created 41 days ago, changed 40 days ago; the other
    // item created 36 and deleted 35 days ago. The third stays recent.
    const backdate = async (itemId: string, kind: string, days: number) =>
      em().execute(`update item_change set at = ?::timestamptz where item_id = ? and kind = ?`, [
        daysAgo(days),
        itemId,
        kind,
      ]);
    await backdate(old.id, 'created', 41);
    await backdate(old.id, 'updated', 40);
    await backdate(gone.id, 'created', 36);
    await backdate(gone.id, 'deleted', 35);
    const records = async (itemId: string) =>
      (
        await em().execute<{ kind: string }[]>('select kind from item_change where item_id = ? order by at', [
          itemId,
        ])
      ).map(r => r.kind);
    expect(await records(gone.id)).to.deep.equal(['created', 'deleted']);

    const workers = startWorkers(services, { clock: false, relay: false });
    try {
      const { job } = await runJob(services, 'housekeeping', 'cleanup', `purge-changes-${Date.now()}`, 20000);
      await job.remove();
    } finally {
      await workers.close();
    }

    expect(ITEM_CHANGE_RETENTION_DAYS).to.equal(30);
    expect(await records(old.id)).to.deep.equal(['updated']);
    expect(await records(gone.id)).to.deep.equal([]);
    expect(await records(recent.id)).to.deep.equal(['created']);
    const asOf = await api()
      .get(`/api/inventory/${old.id}?asOf=${encodeURIComponent(daysAgo(10))}`)
      .set('Authorization', admin.auth)
      .expect(200);
    expect(asOf.body).to.include({ id: old.id, quantity: 8, price: 3.5 });
  });
});
