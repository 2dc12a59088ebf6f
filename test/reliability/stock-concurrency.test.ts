import { expect } from 'chai';
import type request from 'supertest';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { inLanes, newItem } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { inventorySuite } from '../support/inventory-suite.js';
import { assertChain as assertChainOf } from '../support/history.js';

const assertChain = (itemId: string) => assertChainOf(testApp().services, itemId);

describe('Stock changes under concurrency (R1, R2, R4)', function () {
  this.timeout(120000);
  const fx = inventorySuite();

  it('When 1,000 +1/-1 adjustments hit one item over 50 connections, then nothing is lost and history is exact', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 1000 });
    const deltas = Array.from({ length: 1000 }, (_, i) => (i % 3 === 0 ? -1 : 1));
    const started = Date.now();
    const statuses = await inLanes(deltas.length, 50, async i => {
      const res = await api()
        .patch(
          `/api/inventory/${item.id}/quantity?delta=${deltas[i]}&reason=${deltas[i] > 0 ? 'RESTOCK' : 'SALE'}`,
        )
        .set('Authorization', fx.user.auth);
      return res.status;
    });
    const written = Date.now();
    expect(statuses.filter(s => s !== 200)).to.deep.equal([]);
    const expected = 1000 + deltas.reduce((a, b) => a + b, 0);
    const final = await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).expect(200);
    expect(final.body.quantity).to.equal(expected);
    expect(final.body.version).to.equal(1001);
    await waitForHistorySettled(testApp().services, 30000);
    console.log(
      `      1,000 adjustments: ${written - started} ms; history settled ${Date.now() - written} ms later`,
    );
    const rows = await assertChain(item.id);
    expect(rows).to.have.length(1001);
    expect(rows[rows.length - 1].quantity_after).to.equal(expected);
  });

  it('When an item at 10 gets 100 concurrent -1, then exactly 10 succeed, 90 get 422, final 0', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 10 });
    const responses = await Promise.all(
      Array.from({ length: 100 }, () =>
        api()
          .patch(`/api/inventory/${item.id}/quantity?delta=-1&reason=SALE`)
          .set('Authorization', fx.user.auth),
      ),
    );
    const statuses = responses.map(r => r.status);
    expect(statuses.filter(s => s === 200)).to.have.length(10);
    expect(statuses.filter(s => s === 422)).to.have.length(90);
    for (const res of responses.filter(r => r.status === 422))
      expect(res.body).to.include({ error: 'unprocessable_entity', status: 422 });
    const final = await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).expect(200);
    expect(final.body.quantity).to.equal(0);
    await waitForHistorySettled(testApp().services);
    const rows = await assertChain(item.id);
    expect(rows.filter(r => r.change === -1)).to.have.length(10);
  });

  it('When the same Idempotency-Key is sent 10x concurrently and 10x in a row, then one effect and identical responses', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 50 });
    const send = (key: string, delta: number, who: TestUser = fx.user) =>
      api()
        .patch(`/api/inventory/${item.id}/quantity?delta=${delta}&reason=SALE`)
        .set('Authorization', who.auth)
        .set('Idempotency-Key', key);
    const concurrent = await Promise.all(Array.from({ length: 10 }, () => send('key-1', -3)));
    const sequential = [];
    for (let i = 0; i < 10; i++) sequential.push(await send('key-1', -3));
    const all = [...concurrent, ...sequential];
    expect(all.map(r => r.status)).to.deep.equal(all.map(() => 200));
    expect(new Set(all.map(r => r.text)).size).to.equal(1);
    expect(new Set(all.map(r => r.headers.etag)).size).to.equal(1);
    expect(all[0].body.quantity).to.equal(47);
    expect(all.filter(r => r.headers['idempotent-replayed'] === 'true')).to.have.length(19);

    const reused = await send('key-1', -4).expect(422);
    expect(reused.body.error).to.equal('unprocessable_entity');
    const other = await createUser(testApp().services, 'ROLE_USER');
    const independent = await send('key-1', -3, other).expect(200);
    expect(independent.body.quantity).to.equal(44);

    await waitForHistorySettled(testApp().services);
    const rows = await assertChain(item.id);
    expect(rows.map(r => r.change)).to.deep.equal([50, -3, -3]);
  });

  it('When an Idempotency-Key was last used more than 24 h ago, then it is free again: a different request runs once and its answer is replayed', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 20 });
    const send = (delta: number) =>
      api()
        .patch(`/api/inventory/${item.id}/quantity?delta=${delta}&reason=SALE`)
        .set('Authorization', fx.user.auth)
        .set('Idempotency-Key', `expiring-${item.id}`);
    expect((await send(-1).expect(200)).body.quantity).to.equal(19);
    expect((await send(-2).expect(422)).body.error).to.equal('unprocessable_entity');
    await testApp().services.orm.em.execute(
      `update idempotency_key set created_at = now() - interval '25 hours' where key = ?`,
      [`expiring-${item.id}`],
    );
    const fresh = await send(-2).expect(200);
    expect(fresh.body.quantity).to.equal(17);
    expect(fresh.headers['idempotent-replayed']).to.equal(undefined);
    const replay = await send(-2).expect(200);
    expect(replay.headers['idempotent-replayed']).to.equal('true');
    expect(replay.text).to.equal(fresh.text);
    expect((await send(-1).expect(422)).body.error).to.equal('unprocessable_entity');
    const final = await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).expect(200);
    expect(final.body.quantity).to.equal(17);
  });

  it('When a PUT, a price change, a rename and a delete are each sent twice with one Idempotency-Key, then one effect each and the same answer', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 4 });
    const twice = async (key: string, send: () => request.Test) => {
      const first = await send().set('Idempotency-Key', `${key}-${item.id}`);
      const second = await send().set('Idempotency-Key', `${key}-${item.id}`);
      expect(second.status, key).to.equal(first.status);
      expect(second.text, key).to.equal(first.text);
      return first;
    };
    const put = await twice('put', () =>
      api()
        .put(`/api/inventory/${item.id}`)
        .set('Authorization', fx.admin.auth)
        .send({
          name: `${item.name} b`,
          quantity: 0,
          price: 3.5,
          supplierId: fx.supplierId,
          minimumQuantity: 1,
        }),
    );
    expect(put.body).to.include({ version: 2, quantity: 0 });
    const priced = await twice('price', () =>
      api().patch(`/api/inventory/${item.id}/price?price=4.25`).set('Authorization', fx.user.auth),
    );
    expect(priced.body).to.include({ version: 3, price: 4.25 });
    const renamed = await twice('name', () =>
      api()
        .patch(`/api/inventory/${item.id}/name?name=${encodeURIComponent(`${item.name} c`)}`)
        .set('Authorization', fx.admin.auth),
    );
    expect(renamed.body.version).to.equal(4);
    await twice('delete', () =>
      api().delete(`/api/inventory/${item.id}?reason=SCRAPPED`).set('Authorization', fx.admin.auth),
    ).then(res => expect(res.status).to.equal(204));
    await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).expect(404);
  });

  it('When a create is retried with its Idempotency-Key, then one item and the same 201', async () => {
    const body = { name: `Idem create ${Date.now()}`, quantity: 3, price: 1, supplierId: fx.supplierId };
    const key = `create-${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        api()
          .post('/api/inventory')
          .set('Authorization', fx.admin.auth)
          .set('Idempotency-Key', key)
          .send(body),
      ),
    );
    expect(responses.map(r => r.status)).to.deep.equal([201, 201, 201, 201, 201]);
    expect(new Set(responses.map(r => r.text)).size).to.equal(1);
    expect(new Set(responses.map(r => r.headers.location)).size).to.equal(1);
    const bad = await api()
      .post('/api/inventory')
      .set('Authorization', fx.admin.auth)
      .set('Idempotency-Key', 'bad key with spaces')
      .send(body)
      .expect(400);
    expect(bad.body.error).to.equal('bad_request');
  });
});
