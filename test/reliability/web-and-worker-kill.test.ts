import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser } from '../support/users.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { killProcess, stopProcess, WorkerProcess } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { spawnStockroom, waitForHttp } from '../support/spawn-stockroom.js';
import { testEnv } from '../support/test-env.js';
import { assertChain } from '../support/history.js';
import { waitFor } from '../support/wait-for.js';
import { pendingForSql } from '../../domain/outbox/pending-events.js';
import { OUTBOX_CONSUMERS } from '../../domain/outbox/consumers.js';
import { AnalyticsOracle } from '../support/analytics-oracle.js';
import { financialSummary } from '../../domain/analytics/queries/financial-summary.js';
import { monthlyStockMovement } from '../../domain/analytics/queries/monthly-stock-movement.js';

const WRITES = 600;
const KILL_AT = 200;
const START_QUANTITY = 1000;

/** A web process of its own (the Procfile's `web` line) on `port`, sharing the test's database and queues. */
class WebProcess {
  private child: (ChildProcess & { output: () => string }) | undefined;

  constructor(
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawnStockroom(['--web'], { ...this.env, PORT: String(this.port) });
    await waitForHttp(`${this.url}/api/health`, 60000);
  }

  kill = () => killProcess(this.child);

  stop = () => stopProcess(this.child, 15000);
}

/**
 * Issue 31: two web and two worker processes (the Procfile's lines) under a write load; one of each is
 * killed -9 and restarted in the middle of it. Every acknowledged write is in the quantities, the history and
 * the rollups exactly once; a write whose answer was lost with the process (indeterminate) is there at most once.
 */
describe('Two web and two worker processes, one of each killed -9 under writes', function () {
  this.timeout(300000);
  const webs: WebProcess[] = [];
  const workers: WorkerProcess[] = [];

  after(async function () {
    this.timeout(60000);
    await Promise.all([...webs.map(w => w.stop()), ...workers.map(w => w.stop())]);
  });

  it('When a web and a worker process are killed -9 and restarted during 600 writes, then every acknowledged write is applied, recorded and rolled up exactly once', async () => {
    const services = testApp().services;
    const admin = await createUser(services, 'ROLE_ADMIN', 'admin');
    const user = await createUser(services, 'ROLE_USER');
    const supplier = await newSupplier(api(), admin.auth);
    const items: string[] = [];
    for (let i = 0; i < 8; i += 1)
      items.push((await newItem(api(), admin.auth, supplier.id, { quantity: START_QUANTITY })).id);

    const shared = {
      REDIS_PREFIX: services.config.redisPrefix,
      REDIS_URL: services.config.redisUrl,
    };
    const webEnv = testEnv({ ...shared, RUN_WORKERS: 'false' });
    for (let i = 0; i < 2; i += 1) webs.push(new WebProcess(await freePort(), webEnv));
    for (let i = 0; i < 2; i += 1) workers.push(new WorkerProcess(shared));
    await Promise.all([...webs.map(w => w.start()), ...workers.map(w => w.start())]);

    // Per item: writes answered 200 (acknowledged) and writes whose answer was lost (indeterminate).
    const acknowledged = new Map(items.map(id => [id, 0]));
    const indeterminate = new Map(items.map(id => [id, 0]));
    const refused: number[] = [];
    let done = 0;
    const writes = inLanes(WRITES, 12, async i => {
      const itemId = items[i % items.length];
      const web = webs[i % webs.length];
      try {
        const res = await fetch(`${web.url}/api/inventory/${itemId}/quantity?delta=1&reason=RESTOCK`, {
          method: 'PATCH',
          headers: { authorization: user.auth },
          signal: AbortSignal.timeout(20000),
        });
        await res.arrayBuffer();
        if (res.status === 200) acknowledged.set(itemId, acknowledged.get(itemId)! + 1);
        else refused.push(res.status);
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code;
        // Refused before the request was sent (the process was down): certainly not applied.
        if (code !== 'ECONNREFUSED') indeterminate.set(itemId, indeterminate.get(itemId)! + 1);
      }
      done += 1;
    });
    await waitFor(() => done >= KILL_AT, 120000, `${KILL_AT} writes`);
    await Promise.all([webs[0].kill(), workers[0].kill()]);
    await Promise.all([webs[0].start(), workers[0].start()]);
    await writes;
    expect(refused, 'answers other than 200').to.deep.equal([]);

    const em = services.orm.em.fork();
    await waitFor(
      async () => {
        const [row] = await em.execute<{ n: string }[]>(
          `select count(*) as n from outbox_event o where aggregate_id = any(string_to_array(?, ','))
             and ${pendingForSql(OUTBOX_CONSUMERS, 'o')}`,
          [items.join(',')],
        );
        return Number(row.n) === 0;
      },
      60000,
      'every consumer done with every event',
    );

    let totalAcknowledged = 0;
    for (const id of items) {
      const [item] = await em.execute<{ quantity: number }[]>(
        'select quantity from inventory_item where id = ?',
        [id],
      );
      const applied = item.quantity - START_QUANTITY;
      const [events] = await em.execute<{ n: string }[]>(
        "select count(*) as n from outbox_event where aggregate_id = ? and payload->>'reason' = 'RESTOCK'",
        [id],
      );
      const history = (await assertChain(services, id)).filter(r => r.change === 1);
      totalAcknowledged += acknowledged.get(id)!;
      // Every acknowledged write applied once; an indeterminate one at most once.
      expect(applied, `item ${id}`).to.be.at.least(acknowledged.get(id)!);
      expect(applied, `item ${id}`).to.be.at.most(acknowledged.get(id)! + indeterminate.get(id)!);
      // The quantity, the outbox and the history agree: one event and one history row per applied write.
      expect(Number(events.n), `events of ${id}`).to.equal(applied);
      expect(history.length, `history of ${id}`).to.equal(applied);
      expect(new Set(history.map(r => r.outbox_event_id)).size).to.equal(applied);
    }
    expect(totalAcknowledged).to.be.greaterThan(WRITES / 2);
    const lost = [...indeterminate.values()].reduce((a, b) => a + b, 0);
    console.log(
      `      ${totalAcknowledged} acknowledged, ${lost} indeterminate, ${WRITES - totalAcknowledged - lost} refused`,
    );

    // The rollups equal what the history itself gives.
    const oracle = await AnalyticsOracle.load(em);
    const today = new Date().toISOString().slice(0, 10);
    const range = { start: '2026-01-01', end: today > '2026-12-31' ? today : '2026-12-31' };
    expect(await financialSummary(em, range, supplier.id)).to.deep.equal(
      oracle.financial(range.start, range.end, supplier.id),
    );
    expect(await monthlyStockMovement(em, range, supplier.id)).to.deep.equal(
      oracle.monthlyMovement(range.start, range.end, supplier.id),
    );
  });
});
