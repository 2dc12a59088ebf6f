import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { newItem } from '../support/inventory.js';
import { inventorySuite } from '../support/inventory-suite.js';
import { freePort } from '../support/ports.js';
import { testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';
import { waitForHistorySettled } from '../support/settle.js';

const ROUNDS = 8;

describe('Purchasing: two web processes race receipts for the last open quantity of a line', function () {
  this.timeout(240000);
  const fx = inventorySuite();
  const webs: (ChildProcess & { output: () => string })[] = [];
  const bases: string[] = [];

  before(async () => {
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      webs.push(spawnStockroom(['--web'], testEnv({ PORT: String(port) })));
      bases.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(bases.map(base => waitForHttp(`${base}/api/health`, 60000)));
  });
  after(async () => {
    for (const web of webs) {
      if (web.exitCode === null && web.signalCode === null) web.kill('SIGTERM');
      await waitForExit(web, 15000).catch(() => web.kill('SIGKILL'));
    }
  });

  const sql = <T>(text: string, params: unknown[] = []) =>
    testApp().services.orm.em.fork().execute<T[]>(text, params);

  /** A receipt of `quantity` of `itemId` on `orderId`, sent to the web process at `base`. */
  const receipt = async (base: string, orderId: string, itemId: string, quantity: number) => {
    const res = await fetch(`${base}/api/purchase-orders/${orderId}/receipts`, {
      method: 'POST',
      headers: { Authorization: fx.user.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ lines: [{ itemId, quantity }] }),
    });
    return { status: res.status, body: (await res.json()) as { lines?: { quantity: number }[] } };
  };

  it('When each process gets one of two receipts for the same last quantity, then one 201 and one 409 every time; the item, onOrderQuantity, the line and the history agree', async () => {
    const item = await newItem(api(), fx.admin.auth, fx.supplierId, { quantity: 10, price: 2.5 });
    let expected = 10;
    for (let round = 0; round < ROUNDS; round += 1) {
      const created = await api()
        .post('/api/purchase-orders')
        .set('Authorization', fx.admin.auth)
        .send({ supplierId: fx.supplierId, lines: [{ itemId: item.id, quantity: 4 }] })
        .expect(201);
      await api()
        .post(`/api/purchase-orders/${created.body.id}/order`)
        .set('Authorization', fx.admin.auth)
        .expect(200);
      // Both ask for more than half of what is open: at most one can be taken.
      const answers = await Promise.all([
        receipt(bases[round % 2], created.body.id, item.id, 4),
        receipt(bases[(round + 1) % 2], created.body.id, item.id, 3),
      ]);
      const statuses = answers.map(a => a.status).sort();
      expect(statuses, JSON.stringify(answers.map(a => a.body))).to.deep.equal([201, 409]);
      const won = answers.find(a => a.status === 201)!.body.lines![0].quantity;
      expected += won;
      const [line] = await sql<{ quantity_received: number; quantity: number }>(
        'select quantity_received, quantity_ordered as quantity from purchase_order_line where purchase_order_id = ?',
        [created.body.id],
      );
      expect(line.quantity_received).to.equal(won);
      expect(line.quantity_received).to.be.at.most(line.quantity);
      // What was still to come leaves onOrderQuantity; the next round starts from nothing on order.
      if (won < 4)
        await api()
          .post(`/api/purchase-orders/${created.body.id}/cancel`)
          .set('Authorization', fx.admin.auth)
          .expect(200);
    }
    const now = (await api().get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth).expect(200))
      .body;
    expect(now).to.include({ quantity: expected, onOrderQuantity: 0 });
    await waitForHistorySettled(testApp().services, 30000);
    const [history] = await sql<{ received: string; entries: string }>(
      `select coalesce(sum(change), 0)::text as received, count(*)::text as entries
         from stock_history where item_id = ? and purchase_order_id is not null`,
      [item.id],
    );
    expect({ received: Number(history.received), entries: Number(history.entries) }).to.deep.equal({
      received: expected - 10,
      entries: ROUNDS,
    });
  });
});
