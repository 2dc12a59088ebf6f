import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { csvFile, drainStockEvents, runImport } from '../support/csv.js';
import { startWorkers } from '../../workers/main.js';

interface ChangeRow {
  kind: string;
  version: number;
  name: string;
  sku: string | null;
  quantity: number;
  price: string;
  minimum_quantity: number;
  supplier_id: string;
  at: string;
}

/** The item-change records of an item, in the order they were written. */
const changesOf = (itemId: string) =>
  testApp()
    .services.orm.em.fork()
    .execute<ChangeRow[]>(
      `select kind, version, name, sku, quantity, price::text as price, minimum_quantity, supplier_id, at::text as at
         from item_change where item_id = ? order by xid, id`,
      [itemId],
    );

/** Contract, "Item changes are events": every change of an item writes an item-change record with its new version. */
describe('Ledger: item changes are events', () => {
  let admin: TestUser;
  let supplierId: string;
  let otherSupplierId: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    supplierId = (await newSupplier(api(), admin.auth)).id;
    otherSupplierId = (await newSupplier(api(), admin.auth)).id;
  });

  it('When an item is created with quantity 0, renamed, replaced, re-priced, adjusted and deleted, then each change is one record with the new version and state', async () => {
    const item = await newItem(api(), admin.auth, supplierId, { quantity: 0, price: 3, sku: 'IC-1' });
    await api()
      .patch(`/api/inventory/${item.id}/name?name=${encodeURIComponent(`${item.name} renamed`)}`)
      .set('Authorization', admin.auth)
      .expect(200);
    // A PUT that changes only the supplier, the minimum and the sku (no stock event).
    await api()
      .put(`/api/inventory/${item.id}`)
      .set('Authorization', admin.auth)
      .send({
        name: `${item.name} renamed`,
        quantity: 0,
        price: 3,
        supplierId: otherSupplierId,
        minimumQuantity: 4,
        sku: 'IC-2',
      })
      .expect(200);
    await api()
      .patch(`/api/inventory/${item.id}/price?price=4.5`)
      .set('Authorization', admin.auth)
      .expect(200);
    const adjusted = await api()
      .patch(`/api/inventory/${item.id}/quantity?delta=7&reason=RESTOCK`)
      .set('Authorization', admin.auth)
      .expect(200);
    await api()
      .patch(`/api/inventory/${item.id}/quantity?delta=-7&reason=SALE`)
      .set('Authorization', admin.auth)
      .expect(200);
    await api()
      .delete(`/api/inventory/${item.id}?reason=SCRAPPED`)
      .set('Authorization', admin.auth)
      .expect(204);

    const rows = await changesOf(item.id);
    expect(rows.map(r => [r.kind, r.version])).to.deep.equal([
      ['created', 1],
      ['updated', 2],
      ['updated', 3],
      ['updated', 4],
      ['updated', 5],
      ['updated', 6],
      ['deleted', 7],
    ]);
    expect(rows[0]).to.include({ quantity: 0, price: '3.00', sku: 'IC-1', supplier_id: supplierId });
    expect(rows[1].name).to.equal(`${item.name} renamed`);
    expect(rows[2]).to.include({ supplier_id: otherSupplierId, minimum_quantity: 4, sku: 'IC-2' });
    expect(rows[3].price).to.equal('4.50');
    expect(rows[4]).to.include({ quantity: 7, version: adjusted.body.version });
    expect(rows[5].quantity).to.equal(0);
    const times = rows.map(r => Date.parse(r.at.replace(' ', 'T').replace(/\+00$/, 'Z')));
    expect(times).to.deep.equal([...times].sort((a, b) => a - b));
  });

  it('When a write is refused (negative stock, duplicate name, stale version), then no record is written', async () => {
    const item = await newItem(api(), admin.auth, supplierId, { quantity: 2 });
    const other = await newItem(api(), admin.auth, supplierId, { quantity: 1 });
    await api()
      .patch(`/api/inventory/${item.id}/quantity?delta=-3&reason=SALE`)
      .set('Authorization', admin.auth)
      .expect(422);
    await api()
      .patch(`/api/inventory/${item.id}/name?name=${encodeURIComponent(other.name)}`)
      .set('Authorization', admin.auth)
      .expect(409);
    await api()
      .patch(`/api/inventory/${item.id}/price?price=9`)
      .set('Authorization', admin.auth)
      .set('If-Match', '"7"')
      .expect(412);
    expect((await changesOf(item.id)).map(r => r.kind)).to.deep.equal(['created']);
  });

  it('When a stock change is booked, then its history entry carries the time of its item change', async () => {
    const item = await newItem(api(), admin.auth, supplierId, { quantity: 5 });
    await api()
      .patch(`/api/inventory/${item.id}/quantity?delta=-2&reason=SALE`)
      .set('Authorization', admin.auth)
      .expect(200);
    const [rows, events] = await Promise.all([
      changesOf(item.id),
      testApp()
        .services.orm.em.fork()
        .execute<{ at: string }[]>(
          `select (payload->>'occurredAt')::timestamptz::text as at from outbox_event where aggregate_id = ? order by id`,
          [item.id],
        ),
    ]);
    expect(events.map(e => e.at)).to.deep.equal(rows.map(r => r.at));
  });

  it('When a CSV import creates an item and counts another, then each writes its item-change record', async function () {
    this.timeout(60000);
    const supplier = await newSupplier(api(), admin.auth);
    const counted = await newItem(api(), admin.auth, supplier.id, { quantity: 10, price: 2.5 });
    const newName = `Imported ${counted.name}`;
    const workers = startWorkers(testApp().services, { clock: false });
    try {
      const status = await runImport(
        api(),
        admin.auth,
        '/api/inventory/import',
        csvFile(
          ['name', 'sku', 'quantity', 'price', 'supplierName', 'minimumQuantity'],
          [
            [counted.name, '', 7, '2.50', supplier.name, 0],
            [newName, '', 0, '1.99', supplier.name, 2],
          ],
        ),
      );
      expect(status.report?.applied).to.equal(true);
      await drainStockEvents(testApp().services);
    } finally {
      await workers.close();
    }
    const countedChanges = await changesOf(counted.id);
    expect(countedChanges.map(r => r.kind)).to.deep.equal(['created', 'updated']);
    expect(countedChanges[1]).to.include({ quantity: 7, version: 2 });
    const [created] = await testApp()
      .services.orm.em.fork()
      .execute<{ id: string }[]>('select id from inventory_item where name = ?', [newName]);
    expect((await changesOf(created.id)).map(r => [r.kind, r.version, r.quantity])).to.deep.equal([
      ['created', 1, 0],
    ]);
  });
});
