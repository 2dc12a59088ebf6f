import { expect } from 'chai';
import { api } from '../setup/hooks.js';
import { productActors, sql, unique, type ProductActors } from '../support/products.js';

interface Outcome {
  kind: 'single' | 'batch' | 'partial';
  sets: { id: number; quantity: number }[];
  status: number;
}

const CONNECTIONS = 500;

/** Runs the tasks with at most `width` in flight; results keep the task order. */
async function inParallel<T>(width: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]();
      }
    }),
  );
  return results;
}

/** Deterministic pseudo-random numbers (the run is reproducible). */
function rng(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
}

describe('Product API: concurrent quantity updates (Jepsen-style checks)', function () {
  this.timeout(120000);
  let actors: ProductActors;
  let ids: number[];
  const START = 100;

  before(async () => {
    actors = await productActors();
    const tag = unique('Conc').replace(' ', '-');
    const rows = await sql<{ id: string }>(
      `insert into product (name, quantity, price, sku)
       select ? || '-' || g, ?, 2.50, ? || '-' || g from generate_series(1, 6) g returning id::text as id`,
      [tag, START, tag],
    );
    ids = rows.map(r => Number(r.id)).sort((a, b) => a - b);
  });

  it('When 500 single, batch and partial updates hit overlapping products all at once, then no 5xx, nothing lost, never negative, and the outbox chain is a serial order', async () => {
    const next = rng(42);
    const plans: Omit<Outcome, 'status'>[] = [];
    for (let i = 0; i < 500; i += 1) {
      const r = next(10);
      if (r < 5) plans.push({ kind: 'single', sets: [{ id: ids[next(ids.length)], quantity: next(1000) }] });
      else if (r < 8) {
        // Batches name products in random order (the server must lock in id order: no deadlocks).
        const chosen = [...ids].sort(() => next(3) - 1).slice(0, 2 + next(ids.length - 1));
        plans.push({ kind: 'batch', sets: chosen.map(id => ({ id, quantity: next(1000) })) });
      } else if (r < 9)
        plans.push({ kind: 'partial', sets: [{ id: ids[next(ids.length)], quantity: next(1000) }] });
      // Invalid: would go negative; must be rejected without effect.
      else plans.push({ kind: 'single', sets: [{ id: ids[next(ids.length)], quantity: -1 - next(5) }] });
    }

    // All 500 requests in flight at once, on 10 database connections: they queue for a connection (bounded by
    // the pool's acquire timeout) and none may fail.
    const outcomes: Outcome[] = await inParallel(
      CONNECTIONS,
      plans.map(plan => async () => {
        const request =
          plan.kind === 'single'
            ? api()
                .put(`/api/products/${plan.sets[0].id}/quantity`)
                .set('Authorization', actors.user.auth)
                .send({ quantity: plan.sets[0].quantity })
            : plan.kind === 'partial'
              ? api()
                  .put(`/api/products/${plan.sets[0].id}`)
                  .set('Authorization', actors.admin.auth)
                  .send({ quantity: plan.sets[0].quantity })
              : api()
                  .put('/api/products/stock/batch')
                  .set('Authorization', actors.user.auth)
                  .send({ updates: plan.sets.map(s => ({ productId: s.id, quantity: s.quantity })) });
        const res = await request;
        return { ...plan, status: res.status };
      }),
    );

    const statuses = outcomes.map(o => o.status);
    expect(
      statuses.filter(s => s >= 500),
      '5xx responses',
    ).to.deep.equal([]);
    for (const o of outcomes) {
      const valid = o.sets.every(s => s.quantity >= 0);
      expect(o.status, JSON.stringify(o)).to.equal(valid ? 200 : 400);
    }
    const accepted = outcomes.filter(o => o.status === 200);

    const finals = await sql<{ id: string; quantity: number }>(
      'select id::text as id, quantity from product p where p.id = any(?::bigint[]) order by p.id',
      [`{${ids.join(',')}}`],
    );
    const events = await sql<{ id: string; aggregate_id: string; payload: any }>(
      `select id::text as id, aggregate_id, payload from outbox_event
       where type = 'product.quantity.changed' and aggregate_id = any(?::text[]) order by outbox_event.id`,
      [`{${ids.join(',')}}`],
    );

    for (const { id, quantity } of finals) {
      const productId = Number(id);
      const submitted = accepted.flatMap(o => o.sets.filter(s => s.id === productId).map(s => s.quantity));
      expect(quantity).to.be.at.least(0);
      // The final value is one an accepted request wrote (absolute sets: the last in the serial order wins).
      expect(submitted, `final ${quantity} of ${productId}`).to.include(quantity);

      // Outbox chain per product, in outbox-id order (= row-lock order): each event starts where the last ended.
      const chain = events.filter(e => e.aggregate_id === id).map(e => e.payload);
      let current = START;
      const remaining = [...submitted];
      for (const e of chain) {
        expect(e.quantityBefore, `chain break on ${productId}`).to.equal(current);
        expect(e.change).to.equal(e.quantityAfter - e.quantityBefore);
        expect(e.quantityAfter).to.be.at.least(0);
        const at = remaining.indexOf(e.quantityAfter);
        expect(at, `event value ${e.quantityAfter} was never submitted`).to.be.at.least(0);
        remaining.splice(at, 1);
        current = e.quantityAfter;
      }
      // Conservation: the changes add up to the final quantity.
      expect(current).to.equal(quantity);
      expect(chain.reduce((sum, e) => sum + e.change, START)).to.equal(quantity);
    }
  });
});
