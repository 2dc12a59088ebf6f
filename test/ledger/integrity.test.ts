import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { inLanes, newItem } from '../support/inventory.js';
import { waitForHistorySettled, waitForItemConsumersDone } from '../support/settle.js';
import { waitFor } from '../support/wait-for.js';
import { inventorySuite } from '../support/inventory-suite.js';

interface Drift {
  itemId: string;
  kind: string;
  detail: string;
  entryIds: string[];
}

describe('Ledger: integrity check (POST /api/admin/integrity/check, a BullMQ job)', function () {
  this.timeout(180000);
  const fx = inventorySuite();

  /** Runs a check through the API and waits for its result. */
  async function runCheck() {
    const { jobId } = (
      await api().post('/api/admin/integrity/check').set('Authorization', fx.admin.auth).expect(202)
    ).body;
    const status = await waitFor(
      async () => {
        const res = await api()
          .get(`/api/admin/integrity/check/${jobId}`)
          .set('Authorization', fx.admin.auth)
          .expect(200);
        return res.body.state === 'completed' || res.body.state === 'failed' ? res.body : undefined;
      },
      120000,
      'integrity check',
    );
    expect(status.state).to.equal('completed');
    expect(status.progress).to.equal(100);
    return status.result as {
      checkedItems: number;
      checkedEntries: number;
      pendingItems: number;
      drift: Drift[];
    };
  }

  it('When the system is healthy and adjustments, orders and receipts go on during the check, then none of its items is reported', async () => {
    const items = await Promise.all(
      [1, 2, 3].map(() => newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 50 })),
    );
    // Their first entries are in the history before the check starts, so it has entries to read under the load.
    await waitForHistorySettled(testApp().services, 30000);
    let writing = true;
    const load = (async () => {
      for (let n = 0; writing; n++)
        await api()
          .patch(`/api/inventory/${items[n % 3].id}/quantity?delta=${n % 2 ? 1 : -1}&reason=SALE`)
          .set('Authorization', fx.user.auth)
          .expect(200);
    })();
    // Orders placed and received meanwhile (stock in, onOrderQuantity up and down) are no drift either.
    const purchasing = (async () => {
      for (let n = 0; writing; n++) {
        const itemId = items[n % 3].id;
        const created = await api()
          .post('/api/purchase-orders')
          .set('Authorization', fx.admin.auth)
          .send({ supplierId: fx.supplierId, lines: [{ itemId, quantity: 5 }] })
          .expect(201);
        await api()
          .post(`/api/purchase-orders/${created.body.id}/order`)
          .set('Authorization', fx.admin.auth)
          .expect(200);
        for (const quantity of [2, 3])
          await api()
            .post(`/api/purchase-orders/${created.body.id}/receipts`)
            .set('Authorization', fx.user.auth)
            .send({ lines: [{ itemId, quantity }] })
            .expect(201);
      }
    })();
    const result = await runCheck();
    writing = false;
    await Promise.all([load, purchasing]);
    expect(result.checkedEntries).to.be.greaterThan(0);
    expect(result.drift.filter(d => items.some(i => i.id === d.itemId))).to.deep.equal([]);
  });

  it('When each kind of drift is made by raw SQL, then each is reported with its item and entries; nothing is repaired', async () => {
    const items = await Promise.all(
      [1, 2, 3, 4].map(() => newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 5 })),
    );
    await inLanes(4, 4, i =>
      api()
        .patch(`/api/inventory/${items[i].id}/quantity?delta=2&reason=RESTOCK`)
        .set('Authorization', fx.admin.auth)
        .expect(200),
    );
    await waitForHistorySettled(testApp().services, 30000);
    const em = testApp().services.orm.em.fork();
    await waitForItemConsumersDone(
      em,
      items.map(i => i.id),
      30000,
      'consumers',
    );
    const [qty, chain, negative, value] = items.map(i => i.id);
    await em.execute('update inventory_item set quantity = quantity + 3 where id = ?', [qty]);
    const rogue = async (itemId: string, change: number, before: number, after: number) =>
      (
        await em.execute<{ id: string }[]>(
          `insert into stock_history (outbox_event_id, item_id, item_name, change, quantity_before, quantity_after, reason,
                                      price_at_change, created_by, "timestamp")
           values ((select coalesce(max(outbox_event_id), 0) + 1000000 from stock_history), ?, 'rogue', ?, ?, ?, 'SALE', 2.5, 'sql', now())
           returning id::text as id`,
          [itemId, change, before, after],
        )
      )[0].id;
    const chainEntry = await rogue(chain, 0, 99, 7);
    const negativeEntry = await rogue(negative, -100, 0, 0);
    await em.execute(
      'update analytics_item_day set closing_quantity = closing_quantity + 1 where item_id = ?',
      [value],
    );
    const result = await runCheck();
    const found = (itemId: string, kind: string) =>
      result.drift.find(d => d.itemId === itemId && d.kind === kind);
    expect(found(qty, 'quantity_mismatch'), 'quantity_mismatch').to.not.equal(undefined);
    expect(found(chain, 'chain_break')!.entryIds).to.include(chainEntry);
    expect(found(negative, 'negative_quantity')!.entryIds).to.include(negativeEntry);
    expect(found(value, 'value_mismatch'), 'value_mismatch').to.not.equal(undefined);
    // Read-only: the item row still carries the drift.
    const current = await api().get(`/api/inventory/${qty}`).set('Authorization', fx.user.auth).expect(200);
    expect(current.body.quantity).to.equal(10);
    const metrics = await api().get('/metrics').expect(200);
    const gauge = /stockroom_integrity_drift_items (\d+)/.exec(metrics.text);
    expect(Number(gauge?.[1])).to.be.at.least(4);
  });

  it('When an order is open and partly received, then nothing is reported for its item; a corrupted onOrderQuantity is reported as on_order_mismatch', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 5 });
    const order = (
      await api()
        .post('/api/purchase-orders')
        .set('Authorization', fx.admin.auth)
        .send({ supplierId: fx.supplierId, lines: [{ itemId: item.id, quantity: 6, unitCost: 1.1 }] })
        .expect(201)
    ).body;
    await api()
      .post(`/api/purchase-orders/${order.id}/order`)
      .set('Authorization', fx.admin.auth)
      .expect(200);
    await api()
      .post(`/api/purchase-orders/${order.id}/receipts`)
      .set('Authorization', fx.user.auth)
      .send({ lines: [{ itemId: item.id, quantity: 2 }] })
      .expect(201);
    await waitForHistorySettled(testApp().services, 30000);
    const clean = await runCheck();
    expect(clean.drift.filter(d => d.itemId === item.id)).to.deep.equal([]);
    await testApp()
      .services.orm.em.fork()
      .execute('update inventory_item set on_order_quantity = on_order_quantity + 1 where id = ?', [item.id]);
    const corrupted = await runCheck();
    const drift = corrupted.drift.filter(d => d.itemId === item.id);
    expect(drift.map(d => d.kind)).to.deep.equal(['on_order_mismatch']);
    expect(drift[0].detail).to.equal('5 on order, open lines 4');
  });

  it('When an item has thousands of entries (many chunks of the scan), then each is read and a break deep in them is reported with its two entries', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 5, price: 2.5 });
    await waitForHistorySettled(testApp().services, 30000);
    const em = testApp().services.orm.em.fork();
    await waitForItemConsumersDone(em, [item.id], 30000, 'consumers');
    // 5,000 entries alternating +1 / -1 after the item's own (the chain ends where it started: no other drift),
    // the 3,001st claiming a quantity before that its predecessor did not leave.
    const [{ base }] = await em.execute<{ base: string }[]>(
      'select (coalesce(max(outbox_event_id), 0) + 1000000)::text as base from stock_history',
    );
    await em.execute(
      `insert into stock_history (outbox_event_id, item_id, item_name, change, quantity_before, quantity_after, reason,
                                  price_at_change, created_by, "timestamp")
       select ?::bigint + g, ?, 'bulk', case when g % 2 = 1 then 1 else -1 end,
              case when g = 3001 then 99 when g % 2 = 1 then 5 else 6 end, case when g % 2 = 1 then 6 else 5 end,
              'SALE', 2.5, 'sql', now()
         from generate_series(1, 5000) g order by g`,
      [base, item.id],
    );
    const ids = await em.execute<{ id: string }[]>(
      'select id::text as id from stock_history where outbox_event_id in (?::bigint + 3000, ?::bigint + 3001) order by outbox_event_id',
      [base, base],
    );
    const result = await runCheck();
    const [{ n }] = await em.execute<{ n: string }[]>('select count(*)::text as n from stock_history');
    expect(result.checkedEntries).to.equal(Number(n));
    expect(result.drift.filter(d => d.itemId === item.id)).to.deep.equal([
      {
        itemId: item.id,
        kind: 'chain_break',
        detail: 'quantityBefore 99 after 5',
        entryIds: ids.map(r => r.id),
      },
    ]);
  });

  it('When a USER or an anonymous caller asks, then 403 / 401; an unknown job is 404', async () => {
    await api().post('/api/admin/integrity/check').set('Authorization', fx.user.auth).expect(403);
    await api().post('/api/admin/integrity/check').expect(401);
    await api()
      .get('/api/admin/integrity/check/integrity-nope')
      .set('Authorization', fx.admin.auth)
      .expect(404);
    await api().get('/api/admin/integrity/check/rebuild-1').set('Authorization', fx.admin.auth).expect(404);
  });
});
