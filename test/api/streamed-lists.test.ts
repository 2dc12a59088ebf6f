import { request as httpRequest, type IncomingMessage } from 'node:http';
import { expect } from 'chai';
import {
  apiClient,
  startTestApp,
  type ApiClient,
  type TestApp,
  resetTestDatabase,
} from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { createUser, type TestUser } from '../support/users.js';
import { waitFor } from '../support/wait-for.js';

const ROWS = 40_000;
/** A database of its own: the large history would slow every other suite's unpaged history reads. */
const STREAM_DATABASE_URL = `${TEST_DATABASE_URL}_streams`;

/** Backends of the streaming pool that are still running a query or holding a transaction open. */
async function busyStreamBackends(app: TestApp): Promise<number> {
  const [row] = await app.services.orm.em.fork().execute<{ n: string }[]>(
    `select count(*) as n from pg_stat_activity
        where application_name = 'stockroom-stream' and datname = current_database() and state <> 'idle'`,
  );
  return Number(row.n);
}

describe('Unpaged lists and exports stream from a cursor through a spooled file (constant memory, no connection held for a client)', function () {
  this.timeout(120000);
  let app: TestApp;
  let client: ApiClient;
  let user: TestUser;

  before(async () => {
    await resetTestDatabase(STREAM_DATABASE_URL);
    app = await startTestApp({ DATABASE_URL: STREAM_DATABASE_URL });
    client = apiClient(app);
    user = await createUser(app.services, 'ROLE_USER');
    await app.services.orm.em.fork().execute(
      `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
                                  quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
       select n, gen_random_uuid(), 'Streamed item ' || n, null, null, 1, n - 1, n, 'RESTOCK', 1.25,
              'streamer@example.test', timestamptz '2026-01-01' + n * interval '1 second'
         from generate_series(1, ?) n`,
      [ROWS],
    );
  });
  after(async () => app?.close());

  it('When the whole history is listed, then every entry arrives newest first in the documented shape', async () => {
    const res = await client.get('/api/stock-history').set('Authorization', user.auth).expect(200);
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
    const body = res.body as { itemName: string; quantityAfter: number; priceAtChange: number }[];
    expect(body).to.have.length(ROWS);
    expect(body[0]).to.deep.include({
      itemName: `Streamed item ${ROWS}`,
      quantityAfter: ROWS,
      priceAtChange: 1.25,
    });
    expect(body.at(-1)!.quantityAfter).to.equal(1);
    expect(await busyStreamBackends(app)).to.equal(0);
  });

  for (const path of ['/api/stock-history', '/api/stock-history/export.csv']) {
    it(`When the client of ${path} stops reading mid-way, then no connection waits for it, and when it goes away its spooled answer is deleted`, async () => {
      const { port } = app.server;
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest({ port, path, headers: { Authorization: user.auth } }, resolve);
        req.on('error', reject);
        req.end();
      });
      expect(response.statusCode).to.equal(200);
      // Read one chunk, then stop reading: the answer was read whole into a file before its first byte.
      await new Promise(resolve => response.once('data', resolve));
      response.pause();
      expect(await busyStreamBackends(app)).to.equal(0);
      expect(app.services.spool.usedBytes).to.be.above(0);
      response.destroy();
      await waitFor(async () => app.services.spool.usedBytes === 0, 10000, 'the spooled answer deleted');
    });
  }
});
