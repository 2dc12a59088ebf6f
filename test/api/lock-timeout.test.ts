import { expect } from 'chai';
import pg from 'pg';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { waitFor } from '../support/wait-for.js';

const LOCK_TIMEOUT_MS = 1000;
/** Hard upper bound that tells a bounded wait from the old one (the 30 s statement timeout, then 500). */
const ANSWERED_WITHIN_MS = 3 * LOCK_TIMEOUT_MS + 4000;

/** A raw connection holding row locks in an open transaction, as an import or a stuck session would. */
async function holdLock(statement: string, params: unknown[]): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await holder.connect();
  await holder.query('begin');
  await holder.query(statement, params);
  return holder;
}

async function release(holder: pg.Client): Promise<void> {
  await holder.query('rollback');
  await holder.end();
}

describe('Writes blocked by a row lock (LOCK_TIMEOUT_MS): 503 with Retry-After, never 500, and the pool stays usable', function () {
  this.timeout(120000);
  let app: TestApp;
  let client: ApiClient;
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    app = await startTestApp({ LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) }, { migrate: false });
    client = apiClient(app);
    admin = await createUser(app.services, 'ROLE_ADMIN', 'admin');
    user = await createUser(app.services, 'ROLE_USER');
  });
  after(async () => app?.close());

  it('When 15 writes wait on a locked item, then each answers 503 with Retry-After within the lock timeout (per pool round), nothing is applied, and unrelated reads, /api/me and login answer 200 meanwhile', async () => {
    const supplier = await newSupplier(client, admin.auth);
    const item = await newItem(client, admin.auth, supplier.id, { quantity: 10 });
    const other = await newItem(client, admin.auth, supplier.id, { quantity: 3 });
    const holder = await holdLock('select 1 from inventory_item where id = $1 for update', [item.id]);
    try {
      let writing = true;
      const writes = Promise.all(
        Array.from({ length: 15 }, async (_, i) => {
          const started = Date.now();
          const res =
            i % 3 === 2
              ? await client
                  .put(`/api/inventory/${item.id}`)
                  .set('Authorization', admin.auth)
                  .send({ name: item.name, quantity: 11, price: 2.5, supplierId: supplier.id })
              : await client
                  .patch(`/api/inventory/${item.id}/quantity?delta=1&reason=RESTOCK`)
                  .set('Authorization', user.auth);
          return { res, ms: Date.now() - started };
        }),
      ).finally(() => {
        writing = false;
      });
      const reads: number[] = [];
      const reading = (async () => {
        while (writing) {
          const answers = await Promise.all([
            client.get(`/api/inventory/${other.id}`).set('Authorization', user.auth),
            client.get('/api/me').set('Authorization', user.auth),
            client.post('/api/auth/login').send({ username: user.username, password: user.password }),
          ]);
          reads.push(...answers.map(a => a.status));
        }
      })();
      const answered = await writes;
      await reading;

      for (const { res, ms } of answered) {
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.body).to.include({ error: 'service_unavailable', messageKey: 'error.lock.timeout' });
        expect(Number(res.headers['retry-after'])).to.be.at.least(1);
        expect(ms).to.be.below(ANSWERED_WITHIN_MS);
      }
      expect(reads.length).to.be.at.least(3);
      expect(
        reads.every(status => status === 200),
        `reads answered ${reads.join(',')}`,
      ).to.equal(true);
    } finally {
      await release(holder);
    }
    const after = await client.get(`/api/inventory/${item.id}`).set('Authorization', user.auth).expect(200);
    expect(after.body).to.include({ quantity: 10, version: item.version });
    await client
      .patch(`/api/inventory/${item.id}/quantity?delta=1&reason=RESTOCK`)
      .set('Authorization', user.auth)
      .expect(200);
  });

  it('When a product write waits on a locked row, then 503 with Retry-After in the product envelope', async () => {
    const product = await client
      .post('/api/products')
      .set('Authorization', admin.auth)
      .send({ name: `Locked ${Date.now()}`, quantity: 4, price: 3 })
      .expect(201);
    const holder = await holdLock('select 1 from product where id = $1 for update', [product.body.id]);
    try {
      const res = await client
        .put(`/api/products/${product.body.id}/quantity`)
        .set('Authorization', user.auth)
        .send({ quantity: 9 })
        .expect(503);
      expect(res.body).to.include({ success: false, error: 'service_unavailable', status: 503 });
      expect(Number(res.headers['retry-after'])).to.be.at.least(1);
    } finally {
      await release(holder);
    }
  });

  it('When a waiting write is cancelled by the statement timeout or an administrator (57014), then 503 with Retry-After, not 500', async () => {
    const patient = await startTestApp({ LOCK_TIMEOUT_MS: '60000' }, { migrate: false });
    try {
      const supplier = await newSupplier(apiClient(patient), admin.auth);
      const item = await newItem(apiClient(patient), admin.auth, supplier.id);
      const holder = await holdLock('select 1 from inventory_item where id = $1 for update', [item.id]);
      try {
        const write = apiClient(patient)
          .patch(`/api/inventory/${item.id}/quantity?delta=1&reason=RESTOCK`)
          .set('Authorization', user.auth)
          .then(res => res);
        // The write's backend waits on the lock: cancel its statement as statement_timeout would.
        const waiting = await waitFor(
          async () => {
            const rows = (
              await holder.query<{ pid: number }>(
                `select pid from pg_stat_activity
                  where datname = current_database() and application_name = 'stockroom' and wait_event_type = 'Lock'`,
              )
            ).rows;
            return rows.length === 1 ? rows[0] : undefined;
          },
          10000,
          'the write to wait on the lock',
        );
        await holder.query('select pg_cancel_backend($1)', [waiting!.pid]);
        const res = await write;
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.body).to.include({ error: 'service_unavailable', messageKey: 'error.statement.timeout' });
        expect(Number(res.headers['retry-after'])).to.be.at.least(1);
      } finally {
        await release(holder);
      }
    } finally {
      await patient.close();
    }
  });
});
