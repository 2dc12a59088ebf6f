import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { apiClient, resetTestDatabase, startTestApp, type TestApp } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled, waitForItemConsumersDone } from '../support/settle.js';
import { waitFor } from '../support/wait-for.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { AnalyticsOracle } from '../support/analytics-oracle.js';
import { inventorySuite } from '../support/inventory-suite.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { financialSummary } from '../../domain/analytics/queries/financial-summary.js';
import { rebuildRollups } from '../../domain/analytics/rebuild/rebuild-rollups.js';
import type { ApiClient } from '../support/test-app.js';
import { STOCK_HISTORY_CONSUMER } from '../../domain/outbox/consumers.js';
import { nativePool } from '../../domain/shared/native-transaction.js';

interface Entry {
  id: string;
  change: number;
  reason: string;
  quantityAfter: number;
  reversalOf: string | null;
  reversedBy: string | null;
  note: string | null;
}

/** The item's history, newest first, once the consumer has written everything pending. */
async function historyOf(client: ApiClient, app: TestApp, auth: string, itemId: string): Promise<Entry[]> {
  await waitForHistorySettled(app.services, 30000);
  return (await client.get(`/api/stock-history/item/${itemId}`).set('Authorization', auth).expect(200)).body;
}

const WEBHOOK_DATABASE_URL = `${TEST_DATABASE_URL}_reversal_webhook`;

const adjust = (client: ApiClient, auth: string, id: string, delta: number, reason: string) =>
  client
    .patch(`/api/inventory/${id}/quantity?delta=${delta}&reason=${reason}`)
    .set('Authorization', auth)
    .expect(200);

describe('Ledger: reversals (POST /api/stock-history/{id}/reverse)', function () {
  this.timeout(120000);
  const fx = inventorySuite();

  const history = (itemId: string) => historyOf(api(), testApp(), fx.user.auth, itemId);

  it('When 20 reversals of one entry race, then exactly one 201 (with the reserved entry) and 19 conflicts', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 10 });
    await adjust(api(), fx.admin.auth, item.id, -3, 'SALE');
    const sale = (await history(item.id)).find(e => e.reason === 'SALE')!;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        api()
          .post(`/api/stock-history/${sale.id}/reverse`)
          .set('Authorization', fx.admin.auth)
          .send({ note: 'keyed twice' }),
      ),
    );
    expect(answers.map(r => r.status).sort()).to.deep.equal([201, ...Array<number>(19).fill(409)]);
    const created = answers.find(r => r.status === 201)!;
    expect(created.headers.location).to.equal(`/api/stock-history/${created.body.id}`);
    expect(created.body).to.include({ change: 3, reason: 'SALE', reversalOf: sale.id, note: 'keyed twice' });
    for (const r of answers.filter(a => a.status === 409)) expect(r.body.error).to.equal('conflict');
    const entries = await history(item.id);
    expect(entries.find(e => e.id === sale.id)!.reversedBy).to.equal(created.body.id);
    const reversal = (
      await api().get(created.headers.location).set('Authorization', fx.user.auth).expect(200)
    ).body;
    expect(reversal).to.include({ change: 3, quantityAfter: 10, reversalOf: sale.id, reversedBy: null });
    const current = await api()
      .get(`/api/inventory/${item.id}`)
      .set('Authorization', fx.user.auth)
      .expect(200);
    expect(current.body.quantity).to.equal(10);
  });

  it('When a reversal is reversed, or an entry without a quantity change, an unknown one or one of a deleted item, then 409 / 400 / 404 / 409', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 4 });
    await api()
      .patch(`/api/inventory/${item.id}/price?price=3.5`)
      .set('Authorization', fx.admin.auth)
      .expect(200);
    const entries = await history(item.id);
    const initial = entries.find(e => e.reason === 'INITIAL_STOCK')!;
    const price = entries.find(e => e.reason === 'PRICE_CHANGE')!;
    const reversed = await api()
      .post(`/api/stock-history/${initial.id}/reverse`)
      .set('Authorization', fx.admin.auth)
      .expect(201);
    // Before and after the consumer has written the reversing entry.
    await api()
      .post(`/api/stock-history/${reversed.body.id}/reverse`)
      .set('Authorization', fx.admin.auth)
      .expect(409);
    await history(item.id);
    const again = await api()
      .post(`/api/stock-history/${reversed.body.id}/reverse?lang=de`)
      .set('Authorization', fx.admin.auth)
      .expect(409);
    expect(again.body.message).to.equal('Eine Stornierung kann nicht storniert werden');
    const zero = await api()
      .post(`/api/stock-history/${price.id}/reverse`)
      .set('Authorization', fx.admin.auth)
      .expect(400);
    expect(zero.body.message).to.equal('only quantity changes can be reversed');
    await api()
      .post('/api/stock-history/999999999999/reverse')
      .set('Authorization', fx.admin.auth)
      .expect(404);
    await api().post('/api/stock-history/abc/reverse').set('Authorization', fx.admin.auth).expect(404);
    await api().get('/api/stock-history/999999999999').set('Authorization', fx.user.auth).expect(404);
    await api().post(`/api/stock-history/${price.id}/reverse`).set('Authorization', fx.user.auth).expect(403);
    await api().post(`/api/stock-history/${price.id}/reverse`).expect(401);
    await api()
      .delete(`/api/inventory/${item.id}?reason=LOST`)
      .set('Authorization', fx.admin.auth)
      .expect(204);
    const restock = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 0 });
    await adjust(api(), fx.admin.auth, restock.id, 2, 'RESTOCK');
    await adjust(api(), fx.admin.auth, restock.id, -2, 'SALE');
    const sold = (await history(restock.id)).find(e => e.reason === 'SALE')!;
    await api()
      .delete(`/api/inventory/${restock.id}?reason=LOST`)
      .set('Authorization', fx.admin.auth)
      .expect(204);
    await api().post(`/api/stock-history/${sold.id}/reverse`).set('Authorization', fx.admin.auth).expect(409);
  });

  it('When a reversal would make the quantity negative, then 422 and nothing is written', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 0 });
    await adjust(api(), fx.admin.auth, item.id, 5, 'RESTOCK');
    await adjust(api(), fx.admin.auth, item.id, -4, 'SALE');
    const restock = (await history(item.id)).find(e => e.reason === 'RESTOCK')!;
    const em = testApp().services.orm.em.fork();
    const count = async () =>
      (
        await em.execute<{ n: string }[]>(
          `select (select count(*) from outbox_event where aggregate_id = ?) + (select count(*) from stock_reversal
             where original_id = ?) + (select count(*) from item_change where item_id = ?::uuid) as n`,
          [item.id, restock.id, item.id],
        )
      )[0].n;
    const before = await count();
    const res = await api()
      .post(`/api/stock-history/${restock.id}/reverse`)
      .set('Authorization', fx.admin.auth)
      .expect(422);
    expect(res.body.error).to.equal('unprocessable_entity');
    expect(await count()).to.equal(before);
    const current = await api()
      .get(`/api/inventory/${item.id}`)
      .set('Authorization', fx.user.auth)
      .expect(200);
    expect(current.body).to.include({ quantity: 1, version: 3 });
    // Once the stock is there, the same entry can be reversed.
    await adjust(api(), fx.admin.auth, item.id, 4, 'RETURN');
    await api()
      .post(`/api/stock-history/${restock.id}/reverse`)
      .set('Authorization', fx.admin.auth)
      .expect(201);
  });

  it('When reversals of every kind are booked, then the rollups (consumer and rebuild) equal the oracle', async () => {
    const supplier = (await newSupplier(api(), fx.admin.auth)).id;
    const item = await newItem(api(), fx.admin.auth, supplier, { quantity: 10, price: 2 });
    await api()
      .patch(`/api/inventory/${item.id}/price?price=5`)
      .set('Authorization', fx.admin.auth)
      .expect(200);
    await adjust(api(), fx.admin.auth, item.id, 10, 'RESTOCK');
    await adjust(api(), fx.admin.auth, item.id, -4, 'SALE');
    await adjust(api(), fx.admin.auth, item.id, -2, 'DAMAGED');
    await adjust(api(), fx.admin.auth, item.id, 3, 'RETURN');
    await adjust(api(), fx.admin.auth, item.id, -1, 'RETURNED_TO_SUPPLIER');
    await api()
      .patch(`/api/inventory/${item.id}/price?price=7.25`)
      .set('Authorization', fx.admin.auth)
      .expect(200);
    await adjust(api(), fx.admin.auth, item.id, 6, 'RESTOCK');
    const entries = await history(item.id);
    for (const reason of ['SALE', 'DAMAGED', 'RETURN', 'RETURNED_TO_SUPPLIER', 'RESTOCK'])
      await api()
        .post(`/api/stock-history/${entries.find(e => e.reason === reason)!.id}/reverse`)
        .set('Authorization', fx.admin.auth)
        .expect(201);
    await history(item.id);
    const em = testApp().services.orm.em.fork();
    await waitForItemConsumersDone(em, [item.id], 30000, 'analytics and alerts');
    const today = new Date().toISOString().slice(0, 10);
    const range = { start: today, end: today };
    const expected = (await AnalyticsOracle.load(em)).financial(today, today, supplier);
    expect(await financialSummary(em, range, supplier)).to.deep.equal(expected);
    // A reversed SALE undoes its cost of goods sold instead of counting as a purchase.
    expect(expected.cogsQty).to.equal(0);
    await rebuildRollups(em);
    expect(await financialSummary(em, range, supplier)).to.deep.equal(
      (await AnalyticsOracle.load(em)).financial(today, today, supplier),
    );
  });

  it('When a reversal commits while the consumer is held off its partition, then a cursor walk started before its entry is written keeps its total and returns exactly that many entries', async () => {
    const em = testApp().services.orm.em.fork();
    const partOf = async (itemId: string) =>
      (
        await em.execute<{ part: number }[]>('select part from outbox_event where aggregate_id = ? limit 1', [
          itemId,
        ])
      )[0].part;
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 10 });
    await adjust(api(), fx.admin.auth, item.id, -3, 'SALE');
    const sale = (await history(item.id)).find(e => e.reason === 'SALE')!;
    const part = await partOf(item.id);
    // The stock-history consumer skips a partition whose advisory lock another session holds.
    const holder = await (await nativePool(em)).connect();
    let first: { totalElements: number; content: Entry[] };
    let next: string;
    let reversalId: string;
    try {
      await holder.query('select pg_advisory_lock($1::int, $2::int)', [
        STOCK_HISTORY_CONSUMER.lockNamespace,
        part,
      ]);
      reversalId = (
        await api()
          .post(`/api/stock-history/${sale.id}/reverse`)
          .set('Authorization', fx.admin.auth)
          .expect(201)
      ).body.id;
      // An entry of another partition written after the reservation: the history's newest id is now above the
      // reserved one while the reversal's entry is still unwritten.
      let other = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 1 });
      while ((await partOf(other.id)) === part)
        other = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 1 });
      await waitFor(
        async () =>
          (
            await em.execute('select 1 from stock_history where item_id = ? and id > ?', [
              other.id,
              reversalId,
            ])
          ).length > 0,
        30000,
        'an entry above the reserved id',
      );
      const page = await api()
        .get(`/api/stock-history/item/${item.id}?size=1&sort=timestamp,asc`)
        .set('Authorization', fx.user.auth)
        .expect(200);
      first = page.body;
      next = /^<([^>]+)>/.exec(page.headers.link)![1];
    } finally {
      await holder.query('select pg_advisory_unlock_all()');
      holder.release();
    }
    expect(first.totalElements).to.equal(2);
    await waitForHistorySettled(testApp().services, 30000);
    const walked = [...first.content];
    for (let url: string | undefined = next; url;) {
      const res: { body: { totalElements: number; content: Entry[] }; headers: Record<string, string> } =
        await api().get(url).set('Authorization', fx.user.auth).expect(200);
      expect(res.body.totalElements).to.equal(2);
      walked.push(...res.body.content);
      url = res.headers.link ? /^<([^>]+)>/.exec(res.headers.link)![1] : undefined;
    }
    expect(walked.map(e => e.reason)).to.deep.equal(['INITIAL_STOCK', 'SALE']);
    // A walk started now sees the reversal.
    const now = await api()
      .get(`/api/stock-history/item/${item.id}?size=5&sort=timestamp,asc`)
      .set('Authorization', fx.user.auth)
      .expect(200);
    expect(now.body.totalElements).to.equal(3);
    expect(now.body.content.map((e: Entry) => e.id)).to.include(reversalId);
  });

  describe('with a low-stock webhook', () => {
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let app: TestApp;
    let appWorkers: RunningWorkers;
    let client: ApiClient;
    let admin: TestUser;
    let user: TestUser;
    let supplierId: string;

    // A database of its own: on the shared one the suite's workers (no webhook URL) could take the alert's
    // event first and mark it without a delivery.
    before(async () => {
      receiver = await startReceiver(0);
      await resetTestDatabase(WEBHOOK_DATABASE_URL);
      app = await startTestApp({
        DATABASE_URL: WEBHOOK_DATABASE_URL,
        LOW_STOCK_WEBHOOK_URL: receiver.url,
        WEBHOOK_SECRET: 'webhook-secret-for-tests-0123456789',
      });
      appWorkers = startWorkers(app.services, { clock: false });
      client = apiClient(app);
      admin = await createUser(app.services, 'ROLE_ADMIN', 'admin');
      user = await createUser(app.services, 'ROLE_USER');
      supplierId = (await newSupplier(client, admin.auth)).id;
    });
    after(async () => {
      await appWorkers?.close();
      await app?.close();
      await receiver?.close();
    });

    it('When a reversal takes an item below its minimum, then an alert opens and its webhook is sent', async () => {
      const item = await newItem(client, admin.auth, supplierId, { quantity: 10, minimumQuantity: 5 });
      await adjust(client, admin.auth, item.id, 10, 'RESTOCK');
      await adjust(client, admin.auth, item.id, -8, 'SALE');
      const restock = (await historyOf(client, app, user.auth, item.id)).find(e => e.reason === 'RESTOCK')!;
      await client
        .post(`/api/stock-history/${restock.id}/reverse`)
        .set('Authorization', admin.auth)
        .expect(201);
      const alerts = await waitFor(async () => {
        const res = await client.get('/api/alerts/low-stock').set('Authorization', user.auth).expect(200);
        return (res.body as { itemId: string; quantity: number }[]).find(a => a.itemId === item.id);
      }, 30000);
      expect(alerts!.quantity).to.equal(2);
      await waitFor(() => receiver.received.some(r => r.body.includes(item.id)), 30000, 'webhook');
    });
  });
});
