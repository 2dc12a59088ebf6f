import { expect } from 'chai';
import { api, ownDatabase, testApp } from '../setup/hooks.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled, waitForItemConsumersDone } from '../support/settle.js';
import { waitFor } from '../support/wait-for.js';
import { AnalyticsOracle } from '../support/analytics-oracle.js';
import { inventorySuite } from '../support/inventory-suite.js';

describe('Purchasing: cost at receipt in the analytics (the financial summary)', function () {
  this.timeout(120000);
  // Its rebuild swaps the rollups of the whole database, and no other suite's rebuild job may run here.
  ownDatabase('receipt_analytics');
  const fx = inventorySuite();

  const em = () => testApp().services.orm.em.fork();
  const today = () => new Date().toISOString().slice(0, 10);

  async function financial(supplierId: string) {
    const url = `/api/analytics/financial/summary?from=${today()}&to=${today()}&supplierId=${supplierId}`;
    return (await api().get(url).set('Authorization', fx.user.auth).expect(200)).body;
  }

  async function settled(itemIds: string[]) {
    await waitForHistorySettled(testApp().services, 30000);
    await waitForItemConsumersDone(em(), itemIds, 30000, 'the analytics consumer');
  }

  it('When goods are received at costs other than the item prices, then N11 books them as purchases at those costs, live and after a rebuild, equal to the oracle', async () => {
    const supplier = await newSupplier(api(), fx.admin.auth);
    const a = await newItem(api(), fx.admin.auth, supplier.id, { quantity: 10, price: 2.5 });
    const b = await newItem(api(), fx.admin.auth, supplier.id, { quantity: 0, price: 4 });
    const draft = await api()
      .post('/api/purchase-orders')
      .set('Authorization', fx.admin.auth)
      .send({
        supplierId: supplier.id,
        lines: [
          { itemId: a.id, quantity: 20, unitCost: 1.1 },
          { itemId: b.id, quantity: 5, unitCost: 7.35 },
        ],
      })
      .expect(201);
    const orderId: string = draft.body.id;
    await api().post(`/api/purchase-orders/${orderId}/order`).set('Authorization', fx.admin.auth).expect(200);
    const receive = (lines: unknown[]) =>
      api()
        .post(`/api/purchase-orders/${orderId}/receipts`)
        .set('Authorization', fx.user.auth)
        .send({ lines })
        .expect(201);
    await receive([
      { itemId: a.id, quantity: 8 },
      { itemId: b.id, quantity: 5 },
    ]);
    await receive([{ itemId: a.id, quantity: 12 }]);
    await api()
      .patch(`/api/inventory/${a.id}/quantity?delta=-15&reason=SALE`)
      .set('Authorization', fx.user.auth)
      .expect(200);
    await settled([a.id, b.id]);
    // A reversal of the sale goes back in at the average the receipts made (not at the price).
    const history = (await api().get(`/api/stock-history/item/${a.id}`).set('Authorization', fx.user.auth))
      .body as { id: string; reason: string }[];
    const sale = history.find(e => e.reason === 'SALE')!;
    await api()
      .post(`/api/stock-history/${sale.id}/reverse`)
      .set('Authorization', fx.admin.auth)
      .send({})
      .expect(201);
    await api()
      .patch(`/api/inventory/${a.id}/quantity?delta=-4&reason=DAMAGED`)
      .set('Authorization', fx.user.auth)
      .expect(200);
    await settled([a.id, b.id]);

    const live = await financial(supplier.id);
    // Initial stock at the price, receipts at their unit costs: 10 x 2.50 + 20 x 1.10 + 5 x 7.35.
    expect(live).to.include({ purchasesQty: 35, purchasesCost: 83.75 });
    // a: 10 @ 2.50, +8 @ 1.10 -> 1.8778, +12 @ 1.10 -> 1.5667 (the prices would keep 2.50).
    expect(live).to.include({ cogsQty: 0, cogsCost: 0, writeOffQty: 4, writeOffCost: 6.27 });
    expect(live).to.include({ endingQty: 31, endingValue: 77.48 });
    const oracle = await AnalyticsOracle.load(em());
    expect(live).to.deep.equal(oracle.financial(today(), today(), supplier.id));

    // Damaged rollups: only a rebuild that reads the receipts' costs gives the same answer again.
    await em().execute(
      `update analytics_item_day set wac_c = wac_c + 1, purchases_cost = purchases_cost + 3
        where item_id in (?, ?)`,
      [a.id, b.id],
    );
    await em().execute('update analytics_item set wac_c = wac_c + 1 where item_id in (?, ?)', [a.id, b.id]);
    await em().execute('update analytics_supplier_month set purchases_cost = purchases_cost + 1');
    await em().execute('delete from analytics_supplier_day');
    await em().execute('update analytics_total_month set purchases_cost = purchases_cost + 2');
    await em().execute('delete from analytics_total_day');
    const started = await api()
      .post('/api/admin/reports/rebuild')
      .set('Authorization', fx.admin.auth)
      .expect(202);
    const status = async () =>
      (
        await api()
          .get(`/api/admin/reports/rebuild/${started.body.jobId}`)
          .set('Authorization', fx.admin.auth)
          .expect(200)
      ).body;
    await waitFor(async () => ['completed', 'failed'].includes((await status()).state), 60000, 'the rebuild');
    expect(await status()).to.include({ state: 'completed' });
    expect(await financial(supplier.id)).to.deep.equal(live);

    // The consumer goes on from the rebuilt running state: one more receipt and sale, still the oracle's.
    const second = await api()
      .post('/api/purchase-orders')
      .set('Authorization', fx.admin.auth)
      .send({ supplierId: supplier.id, lines: [{ itemId: b.id, quantity: 3, unitCost: 9.99 }] })
      .expect(201);
    await api()
      .post(`/api/purchase-orders/${second.body.id}/order`)
      .set('Authorization', fx.admin.auth)
      .expect(200);
    await api()
      .post(`/api/purchase-orders/${second.body.id}/receipts`)
      .set('Authorization', fx.user.auth)
      .send({ lines: [{ itemId: b.id, quantity: 3 }] })
      .expect(201);
    await api()
      .patch(`/api/inventory/${b.id}/quantity?delta=-2&reason=SALE`)
      .set('Authorization', fx.user.auth)
      .expect(200);
    await settled([a.id, b.id]);
    const after = await financial(supplier.id);
    expect(after).to.deep.equal((await AnalyticsOracle.load(em())).financial(today(), today(), supplier.id));
    // b: 5 @ 7.35 + 3 @ 9.99 -> 8.34; two sold at it.
    expect(after).to.include({ cogsQty: 2, cogsCost: 16.68 });
  });
});
