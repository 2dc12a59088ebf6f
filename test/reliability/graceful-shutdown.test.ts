import { Agent, request, type IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { startWorkers } from '../../workers/main.js';
import { freePort } from '../support/ports.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';
import { testEnv } from '../support/test-env.js';
import { createUser } from '../support/users.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { waitForHistorySettled } from '../support/settle.js';
import { assertChain } from '../support/history.js';
import { WorkerProcess } from '../support/processes.js';
import { waitFor } from '../support/wait-for.js';
import { startTestApp, resetTestDatabase } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';

const WRITES_PER_SECOND = 200;
const START_QUANTITY = 1000;

interface Outcome {
  status?: number;
  error?: string;
}

/** One PATCH on a kept-alive connection: its status, or the error of a request that found the socket closed. */
function adjust(port: number, agent: Agent, itemId: string, auth: string): Promise<Outcome> {
  return new Promise(resolve => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'PATCH',
        path: `/api/inventory/${itemId}/quantity?delta=1&reason=RESTOCK`,
        headers: { authorization: auth },
        agent,
        timeout: 20000,
      },
      res => {
        res.resume();
        res.once('end', () => resolve({ status: res.statusCode }));
        res.once('error', error => resolve({ error: `response: ${error.message}` }));
      },
    );
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}

/** R12 and issue 29: a platform stops dynos with SIGTERM and kills them 30 s later. */
describe('Graceful shutdown under load (SIGTERM, as a platform stops a dyno)', function () {
  this.timeout(180000);

  it(`When a web process gets SIGTERM during ${WRITES_PER_SECOND} writes/s, then every answered request is 2xx, the unanswered ones never reached the database (history), and it exits well inside 30 s`, async () => {
    const services = testApp().services;
    const admin = await createUser(services, 'ROLE_ADMIN', 'admin');
    const supplier = await newSupplier(api(), admin.auth);
    const items: string[] = [];
    for (let i = 0; i < 8; i += 1)
      items.push((await newItem(api(), admin.auth, supplier.id, { quantity: START_QUANTITY })).id);
    const port = await freePort();
    const child = spawnStockroom(['--web'], testEnv({ PORT: String(port), LOG_LEVEL: 'info' }));
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const outcomes: Promise<Outcome>[] = [];
    try {
      await waitForHttp(`http://127.0.0.1:${port}/api/health`, 30000);
      const started = Date.now();
      const fire = setInterval(() => {
        // Paced by the clock, so a late timer catches up instead of lowering the rate.
        const due = Math.floor(((Date.now() - started) * WRITES_PER_SECOND) / 1000);
        while (outcomes.length < due)
          outcomes.push(adjust(port, agent, items[outcomes.length % items.length], admin.auth));
      }, 5);
      await new Promise(resolve => setTimeout(resolve, 2500));
      const beforeSignal = outcomes.length;
      child.kill('SIGTERM');
      const signalledAt = Date.now();
      const exited = waitForExit(child, 30000).then(code => ({ code, ms: Date.now() - signalledAt }));
      await new Promise(resolve => setTimeout(resolve, 1500));
      clearInterval(fire);
      const { code, ms: exitMs } = await exited;
      expect(code, child.output()).to.equal(0);
      const results = await Promise.all(outcomes);
      const answered = results.filter(r => r.status !== undefined);
      const statuses = new Set(answered.map(r => r.status));
      expect([...statuses], JSON.stringify(results.filter(r => r.status !== 200).slice(0, 5))).to.deep.equal([
        200,
      ]);
      expect(answered.length).to.be.at.least(beforeSignal * 0.9);
      expect(exitMs).to.be.below(30000);
      if (process.env.TEST_SHOW_FIGURES)
        console.log({
          sent: results.length,
          answered: answered.length,
          beforeSignal,
          exitMs,
          errors: results.filter(r => r.error).length,
        });

      // The database: each answered PATCH added 1, nothing else did (history and quantities).
      const workers = startWorkers(services, { clock: false });
      try {
        await waitForHistorySettled(services, 30000);
      } finally {
        await workers.close();
      }
      const [row] = await services.orm.em.fork().execute<{ quantity: string; history: string }[]>(
        `select (select sum(quantity) from inventory_item where id = any(string_to_array(?, ',')::uuid[])) as quantity,
                (select count(*) from stock_history
                  where item_id = any(string_to_array(?, ',')::uuid[]) and reason = 'RESTOCK') as history`,
        [items.join(','), items.join(',')],
      );
      expect(Number(row.quantity) - items.length * START_QUANTITY).to.equal(answered.length);
      expect(Number(row.history)).to.equal(answered.length);
    } finally {
      agent.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('When a worker gets SIGTERM while it drains a backlog, then its batches commit whole, it exits inside 30 s, and the next worker finishes: nothing lost, nothing twice', async () => {
    const services = testApp().services;
    const em = services.orm.em.fork();
    const supplier = await createSupplier(em);
    const items = await Promise.all(
      Array.from({ length: 16 }, () => createItem(em, { supplierId: supplier.id })),
    );
    const changes = items.flatMap(item => Array.from({ length: 400 }, () => item.id));
    await inLanes(changes.length, 8, i =>
      recordStockChange(services.orm.em.fork(), {
        itemId: changes[i],
        change: 1,
        reason: 'RESTOCK',
        at: new Date(),
        withHistory: false,
      }),
    );
    const ids = items.map(item => item.id);
    const historyCount = async () => {
      const [row] = await em.execute<{ n: string; uniq: string }[]>(
        `select count(*) as n, count(distinct outbox_event_id) as uniq from stock_history
          where item_id = any(string_to_array(?, ',')::uuid[])`,
        [ids.join(',')],
      );
      return { n: Number(row.n), distinct: Number(row.uniq) };
    };

    const first = new WorkerProcess({});
    await first.start();
    await waitFor(async () => (await historyCount()).n > 0, 30000, 'the drain to start');
    const { code, ms } = await first.terminate(30000);
    expect(code).to.equal(0);
    expect(ms).to.be.below(30000);
    const atExit = await historyCount();
    if (process.env.TEST_SHOW_FIGURES) console.log({ exitMs: ms, atExit, total: changes.length });
    expect(atExit.distinct).to.equal(atExit.n);
    // Stopped between batches: part of the backlog is left for the next worker.
    expect(atExit.n).to.be.below(changes.length);

    const second = new WorkerProcess({});
    await second.start();
    try {
      await waitFor(async () => (await historyCount()).n >= changes.length, 60000, 'the backlog to drain');
      await waitForHistorySettled(services, 30000);
    } finally {
      await second.stop();
    }
    const done = await historyCount();
    expect(done).to.deep.equal({ n: changes.length, distinct: changes.length });
    for (const id of ids) expect(await assertChain(services, id)).to.have.length(400);
  });

  it('When a stream is still open at the drain deadline, then its socket is destroyed: the client sees a truncated transfer, never a clean end', async () => {
    // A database of its own: a history large enough to outlast the socket buffers of a client that stops reading
    // (about 10 MB: the export is written by COPY, which fills whatever buffers there are at once).
    const databaseUrl = `${TEST_DATABASE_URL}_drain`;
    await resetTestDatabase(databaseUrl);
    const app = await startTestApp({ DATABASE_URL: databaseUrl });
    try {
      const user = await createUser(app.services);
      await app.services.orm.em.fork().execute(
        `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
                                    quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
         select n, gen_random_uuid(), 'Drained item ' || n || ' ' || repeat('x', 200), null, null, 1, n - 1, n, 'RESTOCK', 1.25,
                'drain@example.test', timestamptz '2026-01-01' + n * interval '1 second'
           from generate_series(1, 40000) n`,
      );
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = request(
          {
            port: app.server.port,
            path: '/api/stock-history/export.csv',
            headers: { authorization: user.auth },
          },
          resolve,
        );
        req.on('error', reject);
        req.end();
      });
      expect(response.statusCode).to.equal(200);
      await new Promise(resolve => response.once('data', resolve));
      response.pause();
      const ending = new Promise<string>(resolve => {
        response.once('end', () => resolve('clean end'));
        response.once('aborted', () => resolve('truncated'));
        response.once('error', () => resolve('truncated'));
      });
      const started = Date.now();
      await app.server.stop(500);
      expect(Date.now() - started).to.be.below(5000);
      response.resume();
      expect(await ending).to.equal('truncated');
    } finally {
      await app.close();
    }
  });
});
