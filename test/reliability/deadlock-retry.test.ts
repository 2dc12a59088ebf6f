import { expect } from 'chai';
import pg from 'pg';
import request from 'supertest';
import { createLogger } from '../../config/logger.js';
import { closeServices, openServices } from '../../config/services.js';
import { loadConfig } from '../../config/env.js';
import { startServer } from '../../api/server.js';
import { api, testApp } from '../setup/hooks.js';
import { TEST_DATABASE_URL, testEnv } from '../support/test-env.js';
import { waitFor } from '../support/wait-for.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { createProduct, sql, unique } from '../support/products.js';

interface Answer {
  status: number;
  body: Record<string, any>;
}

/**
 * R10: requests engineered to take the same locks in opposite orders through every multi-row write path:
 * stock batches naming two products as [a,b] and [b,a], and renames that swap two names (each UPDATE holds
 * its own row and then waits on the other's unique-index entry: a textbook deadlock). All 200 at once.
 */
describe('Deadlocks and serialization failures (R10)', function () {
  this.timeout(120000);
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
  });

  it('When 200 conflicting writes run at once, then 0 client-visible 40001/40P01, only 200/409, and the final state is a serial one', async () => {
    const supplierId = (await newSupplier(api(), admin.auth)).id;
    const [a, b] = [await createProduct(admin, { quantity: 0 }), await createProduct(admin, { quantity: 0 })];
    const pairs = async <T>(count: number, make: () => Promise<T>) => {
      const out: [T, T][] = [];
      for (let i = 0; i < count; i += 1) out.push([await make(), await make()]);
      return out;
    };
    const itemPairs = await pairs(20, () => newItem(api(), admin.auth, supplierId, { quantity: 1 }));
    const productPairs = await pairs(20, () => createProduct(admin, { name: unique('Swap') }));

    const writes: (() => Promise<Answer>)[] = [];
    // 80 batches: both products set to the same value, named in opposite orders.
    for (let i = 1; i <= 80; i += 1) {
      const rows = [
        { productId: a.id, quantity: i },
        { productId: b.id, quantity: i },
      ];
      writes.push(() =>
        api()
          .put('/api/products/stock/batch')
          .set('Authorization', user.auth)
          .send({ updates: i % 2 ? rows : rows.reverse() }),
      );
    }
    // 40 inventory renames and 40 inventory PUTs: each pair swaps names (20 pairs of each kind).
    for (const [k, [x, y]] of itemPairs.entries()) {
      const rename = (from: typeof x, to: typeof x) => () =>
        api()
          .patch(`/api/inventory/${from.id}/name?name=${encodeURIComponent(to.name)}`)
          .set('Authorization', admin.auth);
      const put = (from: typeof x, to: typeof x) => () =>
        api()
          .put(`/api/inventory/${from.id}`)
          .set('Authorization', admin.auth)
          .send({ name: to.name, quantity: 1, price: 2.5, supplierId });
      if (k % 2) writes.push(rename(x, y), rename(y, x), put(x, y), put(y, x));
      else writes.push(put(x, y), put(y, x), rename(x, y), rename(y, x));
    }
    // 40 product renames: 20 swapped pairs.
    for (const [x, y] of productPairs)
      for (const [from, to] of [
        [x, y],
        [y, x],
      ])
        writes.push(() =>
          api().put(`/api/products/${from.id}/name`).set('Authorization', admin.auth).send({ name: to.name }),
        );
    expect(writes).to.have.length(200);

    const answers = await Promise.all(writes.map(write => write()));

    const bad = answers.filter(r => ![200, 409].includes(r.status));
    expect(
      bad.map(r => `${r.status} ${JSON.stringify(r.body)}`),
      'answers other than 200/409',
    ).to.deep.equal([]);
    // SQLSTATEs as words: a uuid or a random name may hold the digits 40001 by chance.
    expect(JSON.stringify(answers.map(r => r.body))).not.to.match(/\b40P01\b|\b40001\b|deadlock|serializ/i);
    // Batches never clash on a name: all succeed.
    expect(answers.slice(0, 80).map(r => r.status)).to.deep.equal(new Array(80).fill(200));

    // Serial outcome of the batches: both products hold the value of the same (last) batch, and both saw the
    // batches in the same order (one serial order for the pair).
    const finals = await sql<{ id: string; quantity: number }>(
      'select id::text as id, quantity from product where id = any(?::bigint[]) order by id',
      [`{${a.id},${b.id}}`],
    );
    expect(finals[0].quantity).to.equal(finals[1].quantity);
    const chain = async (id: string) =>
      (
        await sql<{ payload: { quantityBefore: number; quantityAfter: number } }>(
          `select payload from outbox_event where type = 'product.quantity.changed' and aggregate_id = ? order by id`,
          [String(id)],
        )
      ).map(e => e.payload);
    const [chainA, chainB] = [await chain(a.id), await chain(b.id)];
    expect(chainA.map(e => e.quantityAfter)).to.deep.equal(chainB.map(e => e.quantityAfter));
    expect(chainA).to.have.length(80);
    let current = 0;
    for (const e of chainA) {
      expect(e.quantityBefore).to.equal(current);
      current = e.quantityAfter;
    }
    expect(current).to.equal(finals[0].quantity);

    // A name swap can never succeed in a serial order (the other name is taken): every one is 409, names stay.
    expect(answers.slice(80).map(r => r.status)).to.deep.equal(new Array(120).fill(409));
    for (const [x, y] of itemPairs) {
      const names = await sql<{ id: string; name: string }>(
        'select id::text as id, name from inventory_item where id = any(?::uuid[])',
        [`{${x.id},${y.id}}`],
      );
      expect(Object.fromEntries(names.map(n => [n.id, n.name]))).to.deep.equal({
        [x.id]: x.name,
        [y.id]: y.name,
      });
    }
    for (const [x, y] of productPairs) {
      const names = await sql<{ id: string; name: string }>(
        'select id::text as id, name from product where id = any(?::bigint[])',
        [`{${x.id},${y.id}}`],
      );
      expect(Object.fromEntries(names.map(n => [n.id, n.name]))).to.deep.equal({
        [String(x.id)]: x.name,
        [String(y.id)]: y.name,
      });
    }
  });

  /**
   * A real deadlock, every time: a transaction of the test takes `first`, the request takes its own lock and
   * waits for `first`, then the test asks for `second` (held by the request). The test's transaction waits
   * 10 s before it looks for deadlocks, the request's 1 s (the default), so the request's transaction is the
   * one PostgreSQL aborts with 40P01. The test then ends its transaction and the request must still succeed.
   */
  async function collide(
    first: [string, unknown[]],
    second: [string, unknown[]],
    send: () => PromiseLike<Answer>,
    end: 'commit' | 'rollback' = 'commit',
  ): Promise<Answer> {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query('begin');
      await client.query("set local deadlock_timeout = '10s'");
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await client.query(...first);
      const answer = (async () => send())();
      await waitFor(
        async () =>
          Number(
            (
              await sql<{ n: string }>(
                'select count(*) as n from pg_stat_activity where ?::int = any(pg_blocking_pids(pid))',
                [rows[0].pid],
              )
            )[0].n,
          ) > 0,
        10000,
        'the request to wait for the lock the test holds',
      );
      await client.query(...second);
      await client.query(end);
      return await answer;
    } finally {
      await client.end();
    }
  }

  const deadlocks = async () =>
    Number(
      (
        await sql<{ n: string }>(
          'select deadlocks as n from pg_stat_database where datname = current_database()',
        )
      )[0].n,
    );

  it('When a stock batch deadlocks with a transaction locking in the opposite order, then it is retried (and the retry logged): 200 and both rows set', async () => {
    // Its own server with a capturing logger, so the retry's log line can be read.
    const lines: string[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
    const services = await openServices(loadConfig(testEnv({ LOG_LEVEL: 'warn' })), logger);
    const server = await startServer(services, 0);
    try {
      const [a, b] = [await createProduct(admin), await createProduct(admin)];
      const before = await deadlocks();
      const res = await collide(
        ['select 1 from product where id = $1 for update', [b.id]],
        ['select 1 from product where id = $1 for update', [a.id]],
        () =>
          request(server.server)
            .put('/api/products/stock/batch')
            .set('Authorization', user.auth)
            .send({
              updates: [
                { productId: a.id, quantity: 7 },
                { productId: b.id, quantity: 8 },
              ],
            }),
      );
      expect(await deadlocks()).to.be.greaterThan(before);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const rows = await sql<{ quantity: number }>(
        'select quantity from product where id = any(?::bigint[]) order by id',
        [`{${a.id},${b.id}}`],
      );
      expect(rows.map(r => r.quantity)).to.deep.equal([7, 8]);
      const retries = lines
        .map(line => JSON.parse(line) as { msg: string; attempt?: number; sqlState?: string })
        .filter(l => l.msg.startsWith('transaction conflict'));
      expect(retries.map(r => [r.attempt, r.sqlState])).to.deep.equal([[1, '40P01']]);
    } finally {
      await server.stop();
      await closeServices(services);
    }
  });

  it('When a bulk delete deadlocks, then it is retried: 204 and both rows gone', async () => {
    const [a, b] = [await createProduct(admin), await createProduct(admin)];
    const res = await collide(
      ['select 1 from product where id = $1 for update', [b.id]],
      ['select 1 from product where id = $1 for update', [a.id]],
      () =>
        api()
          .delete('/api/products')
          .set('Authorization', admin.auth)
          .send({ ids: [b.id, a.id] }),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(204);
    expect(
      await sql('select 1 from product where id = any(?::bigint[])', [`{${a.id},${b.id}}`]),
    ).to.have.length(0);
  });

  it('When an item PUT (item row, then the new supplier) deadlocks, then it is retried: 200 and the item moved', async () => {
    const from = (await newSupplier(api(), admin.auth)).id;
    const to = (await newSupplier(api(), admin.auth)).id;
    const item = await newItem(api(), admin.auth, from, { quantity: 3 });
    const res = await collide(
      ['select 1 from supplier where id = $1::uuid for update', [to]],
      ['select 1 from inventory_item where id = $1::uuid for update', [item.id]],
      () =>
        api()
          .put(`/api/inventory/${item.id}`)
          .set('Authorization', admin.auth)
          .send({ name: item.name, quantity: 4, price: 2.5, supplierId: to }),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ supplierId: to, quantity: 4, version: 2 });
  });

  it('When a write with an Idempotency-Key (key row, then the item) deadlocks, then it is retried once in effect: 200', async () => {
    const supplierId = (await newSupplier(api(), admin.auth)).id;
    const item = await newItem(api(), admin.auth, supplierId, { quantity: 10 });
    const key = `r10-${item.id}`;
    const res = await collide(
      ['select 1 from inventory_item where id = $1::uuid for update', [item.id]],
      [
        "insert into idempotency_key (user_id, key, fingerprint, response_status) values ($1, $2, repeat('0', 64), 0)",
        [user.id, key],
      ],
      () =>
        api()
          .patch(`/api/inventory/${item.id}/quantity?delta=-2&reason=SALE`)
          .set('Authorization', user.auth)
          .set('Idempotency-Key', key),
      'rollback',
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.quantity).to.equal(8);
    const replay = await api()
      .patch(`/api/inventory/${item.id}/quantity?delta=-2&reason=SALE`)
      .set('Authorization', user.auth)
      .set('Idempotency-Key', key)
      .expect(200);
    expect(replay.headers['idempotent-replayed']).to.equal('true');
    expect(replay.body.quantity).to.equal(8);
  });
});
