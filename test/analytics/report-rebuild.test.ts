import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import fc from 'fast-check';
import pg from 'pg';
import cron from 'node-cron';
import { api, ownDatabase, testApp, testDatabaseUrl } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { SCHEDULES } from '../../workers/clock.js';
import {
  completeHistory,
  createItem,
  createSupplier,
  recordStockChange,
  settleConsumers,
} from '../support/stock-events.js';
import { waitFor } from '../support/wait-for.js';
import { waitForItemConsumersDone } from '../support/settle.js';
import { buildHistory, historyArb, type Built } from '../support/random-history.js';
import { compareAll, probeArb } from '../support/analytics-compare.js';
import { publishEvents } from '../../domain/outbox/publish-events.js';
import { ALERTS_CONSUMER, ANALYTICS_CONSUMER } from '../../domain/outbox/consumers.js';

const run = promisify(execFile);

describe('Report rebuild, schedules and the queue dashboard', function () {
  this.timeout(120000);
  // Its rebuilds and answers over every supplier span the whole database.
  ownDatabase('report_rebuild');
  let workers: RunningWorkers;
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    workers = startWorkers(testApp().services, { clock: false });
    admin = await createUser(testApp().services, 'ROLE_ADMIN');
    user = await createUser(testApp().services, 'ROLE_USER');
  });
  after(async () => {
    await workers.close();
  });

  const status = async (jobId: string) =>
    (await api().get(`/api/admin/reports/rebuild/${jobId}`).set('Authorization', admin.auth).expect(200))
      .body;

  it('When a rebuild runs while writes continue, then afterwards every answer equals the oracle (and it reports progress)', async () => {
    const services = testApp().services;
    const em = () => services.orm.em.fork();
    await fc.assert(
      fc.asyncProperty(historyArb, historyArb, probeArb, async (before, during, probe) => {
        const first = await buildHistory(em(), before);
        await settleConsumers(services);
        // Damage the rollups, so only a real rebuild can make them right again.
        await em().execute(
          'update analytics_item_day set qty_in = qty_in + 7, wac_c = wac_c + 1, cum_entries = cum_entries + 3',
        );
        await em().execute('delete from analytics_user_day');
        await em().execute(
          'update analytics_supplier_month set qty_out = qty_out + 5, cogs_cost = cogs_cost + 1',
        );
        await em().execute('delete from analytics_supplier_day');
        await em().execute('update analytics_item_supplier set entries = entries + 2');
        await em().execute('update analytics_reason_total_day set increase = increase + 3');
        await em().execute('delete from analytics_reason_supplier_day');
        await em().execute('update analytics_total_month set qty_in = qty_in + 4, cogs_cost = cogs_cost + 2');
        await em().execute('delete from analytics_total_day');

        const res = await api()
          .post('/api/admin/reports/rebuild')
          .set('Authorization', admin.auth)
          .expect(202);
        const jobId: string = res.body.jobId;
        // Writes go on during the rebuild; some history entries are not written yet when it takes its snapshot.
        let n = 0;
        const second: Built = await buildHistory(em(), during, () => n++ % 3 !== 0);
        for (const id of second.eventIds)
          await publishEvents(services.queues, [id], [ANALYTICS_CONSUMER, ALERTS_CONSUMER]);

        await waitFor(
          async () => ['completed', 'failed'].includes((await status(jobId)).state),
          60000,
          'the rebuild',
        );
        const done = await status(jobId);
        expect(done).to.include({ jobId, state: 'completed', progress: 100 });
        expect(done.startedAt).to.be.a('string');
        expect(done.finishedAt).to.be.a('string');
        expect(done.result.events).to.be.a('number');

        await completeHistory(em());
        await settleConsumers(services);
        await compareAll(em(), first, probe);
        await compareAll(em(), second, probe);
      }),
      { numRuns: Number(process.env.ANALYTICS_REBUILD_RUNS ?? 5), endOnFailure: true },
    );
  });

  it("When an item's events go back to earlier days, then a rebuild gives the rollups the consumer folded", async () => {
    const services = testApp().services;
    const em = () => services.orm.em.fork();
    // Every rollup, the shared ones summed over their slots.
    const rollups = async () => {
      const read = (sql: string) => em().execute<any[]>(sql);
      return {
        days: await read(
          `select item_id, day::text, supplier_key, supplier_name, item_name, entries, qty_in, qty_out,
                  price_sum::text, closing_quantity, closing_price::text, wac_q, wac_c::text, purchases_cost::text,
                  cogs_cost::text, write_off_cost::text, returns_in_cost::text, last_event_id, cum_entries
           from analytics_item_day order by 1, 2, 3`,
        ),
        reasons: await read('select * from analytics_reason_day order by item_id, day, supplier_key, reason'),
        users: await read(
          'select day::text, supplier_key, created_by, sum(entries)::text as n from analytics_user_day group by 1, 2, 3 order by 1, 2, 3',
        ),
        items: await read('select * from analytics_item order by item_id'),
        pairs: await read('select * from analytics_item_supplier order by item_id, supplier_key'),
        reasonsBySupplier: await read(
          `select supplier_key, day::text, reason, sum(entries)::text, sum(increase)::text, sum(decrease)::text
           from analytics_reason_supplier_day group by 1, 2, 3 order by 1, 2, 3`,
        ),
        reasonTotals: await read(
          `select day::text, reason, sum(entries)::text, sum(increase)::text, sum(decrease)::text
           from analytics_reason_total_day group by 1, 2 order by 1, 2`,
        ),
        totalDays: await read(
          `select day::text, sum(entries)::text, sum(qty_in)::text, sum(qty_out)::text, sum(cogs_cost)::text,
                  sum(purchases_cost)::text, sum(write_off_cost)::text, sum(returns_in_cost)::text
           from analytics_total_day group by 1 order by 1`,
        ),
        totalMonths: await read(
          `select month::text, sum(entries)::text, sum(qty_in)::text, sum(qty_out)::text, sum(cogs_cost)::text,
                  sum(purchases_cost)::text, sum(write_off_cost)::text, sum(returns_in_cost)::text
           from analytics_total_month group by 1 order by 1`,
        ),
        months: await read(
          `select month::text, supplier_key, sum(entries)::text, sum(cogs_cost)::text, sum(purchases_cost)::text
           from analytics_supplier_month group by 1, 2 order by 1, 2`,
        ),
      };
    };
    const start = Date.parse('2026-03-10T12:00:00Z');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ day: fc.nat({ max: 40 }), sale: fc.boolean() }), {
          minLength: 2,
          maxLength: 12,
        }),
        async steps => {
          const supplier = await createSupplier(em());
          const item = await createItem(em(), { supplierId: supplier.id, price: '3.00' });
          // Events dated in any order of days (a clock out of order): restocks, and sales while stock lasts.
          let q = 0;
          for (const { day, sale } of steps) {
            const change = sale && q > 0 ? -1 : 2;
            q += change;
            await recordStockChange(em(), {
              itemId: item.id,
              change,
              reason: change < 0 ? 'SALE' : 'RESTOCK',
              at: new Date(start + day * 86_400_000),
            });
          }
          await settleConsumers(services);
          const folded = await rollups();
          const res = await api()
            .post('/api/admin/reports/rebuild')
            .set('Authorization', admin.auth)
            .expect(202);
          await waitFor(
            async () => (await status(res.body.jobId)).state === 'completed',
            60000,
            'the rebuild',
          );
          expect(await rollups()).to.deep.equal(folded);
        },
      ),
      { numRuns: 5, endOnFailure: true },
    );
  });

  /** An item with two days of history, folded; returns its id. */
  const foldedItem = async () => {
    const services = testApp().services;
    const em = services.orm.em.fork();
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id, price: '4.00' });
    await recordStockChange(em, {
      itemId: item.id,
      change: 6,
      reason: 'RESTOCK',
      at: new Date(Date.now() - 86_400_000),
    });
    await recordStockChange(em, { itemId: item.id, change: -2, reason: 'SALE', at: new Date() });
    await settleConsumers(services);
    return item.id;
  };
  const qtyIn = async (itemId: string) =>
    (
      await testApp()
        .services.orm.em.fork()
        .execute<{ n: string }[]>('select sum(qty_in)::text as n from analytics_item_day where item_id = ?', [
          itemId,
        ])
    )[0].n;
  /** A reader that keeps the day rollup open in a transaction: the rebuild's swap waits for it. */
  const holdDayRollup = async () => {
    const reader = new pg.Client({ connectionString: testDatabaseUrl() });
    await reader.connect();
    await reader.query('begin');
    await reader.query('select count(*) from analytics_item_day');
    return reader;
  };
  const leftovers = async () =>
    (
      await testApp()
        .services.orm.em.fork()
        .execute<{ n: string }[]>(
          "select count(*)::text as n from pg_class where relname like 'analytics%\\_rebuild%'",
        )
    )[0].n;

  it('When a rebuild has built the new rollups but not swapped them in, then readers still get the old ones; after the swap the new ones', async () => {
    const itemId = await foldedItem();
    await testApp()
      .services.orm.em.fork()
      .execute('update analytics_item_day set qty_in = qty_in + 100 where item_id = ?', [itemId]);
    const reader = await holdDayRollup();
    let jobId = '';
    try {
      jobId = (await api().post('/api/admin/reports/rebuild').set('Authorization', admin.auth).expect(202))
        .body.jobId;
      // Progress 97: every new table is complete and analyzed, the swap waits for the open reader.
      await waitFor(async () => (await status(jobId)).progress >= 97, 60000, 'the rebuild to reach its swap');
      expect((await status(jobId)).state).to.equal('active');
      expect(await qtyIn(itemId), 'the old (damaged) rollup').to.equal('206');
      expect(await leftovers(), 'the new tables, not yet swapped').to.not.equal('0');
    } finally {
      await reader.query('commit');
      await reader.end();
    }
    await waitFor(async () => (await status(jobId)).state === 'completed', 60000, 'the rebuild');
    expect(await qtyIn(itemId), 'the rebuilt rollup').to.equal('6');
    expect(await leftovers()).to.equal('0');
  });

  it('When a rebuild is killed (-9) before its swap, then the old rollups are intact and the next rebuild replaces them', async () => {
    const itemId = await foldedItem();
    await testApp()
      .services.orm.em.fork()
      .execute('update analytics_item_day set qty_in = qty_in + 100 where item_id = ?', [itemId]);
    const reader = await holdDayRollup();
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/rebuild-reports.ts'], {
        env: { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout.on('data', chunk => (output += String(chunk)));
      const exited = new Promise(resolve => child.on('exit', resolve));
      await waitFor(() => /rebuild: 97%/.test(output), 60000, 'the rebuild to reach its swap');
      child.kill('SIGKILL');
      await exited;
    } finally {
      await reader.query('commit');
      await reader.end();
    }
    expect(await qtyIn(itemId), 'the old rollup, untouched').to.equal('206');
    const res = await api().post('/api/admin/reports/rebuild').set('Authorization', admin.auth).expect(202);
    await waitFor(
      async () => ['completed', 'failed'].includes((await status(res.body.jobId)).state),
      60000,
      'the rebuild',
    );
    expect((await status(res.body.jobId)).state).to.equal('completed');
    expect(await qtyIn(itemId)).to.equal('6');
    expect(await leftovers(), 'the killed rebuild left no table behind').to.equal('0');
  });

  it('When events are committed but never enqueued (Redis lost them), then the sweeper folds them anyway', async () => {
    const services = testApp().services;
    const em = services.orm.em.fork();
    const supplier = await createSupplier(em);
    const item = await createItem(em, { supplierId: supplier.id, price: '2.00', minimumQuantity: 3 });
    await recordStockChange(em, { itemId: item.id, change: 5, reason: 'INITIAL_STOCK', at: new Date() });
    await recordStockChange(em, { itemId: item.id, change: -4, reason: 'SALE', at: new Date() });
    // No enqueue at all: only the job-scheduled sweeper (every 2 s, SKIP LOCKED) can pick them up.
    await waitForItemConsumersDone(em, [item.id], 20000, 'the sweeper');
    const alerts = await em.execute<any[]>('select * from low_stock_alert where item_id = ?', [item.id]);
    expect(alerts).to.have.length(1);
    const [day] = await em.execute<any[]>(
      'select qty_in, qty_out from analytics_item_day where item_id = ?',
      [item.id],
    );
    expect(day).to.deep.include({ qty_in: '5', qty_out: '4' });
  });

  it('When a rebuild is already waiting, then a second request gets the same job (one at a time)', async () => {
    const queue = testApp().services.queues.queue('reports');
    await queue.pause();
    try {
      const a = await api().post('/api/admin/reports/rebuild').set('Authorization', admin.auth).expect(202);
      const b = await api().post('/api/admin/reports/rebuild').set('Authorization', admin.auth).expect(202);
      expect(b.body.jobId).to.equal(a.body.jobId);
      expect((await status(a.body.jobId)).state).to.equal('waiting');
    } finally {
      await queue.resume();
    }
  });

  it('When not an ADMIN, then 401/403; an unknown job is 404', async () => {
    await api().post('/api/admin/reports/rebuild').expect(401);
    await api().post('/api/admin/reports/rebuild').set('Authorization', user.auth).expect(403);
    await api().get('/api/admin/reports/rebuild/rebuild-1').set('Authorization', user.auth).expect(403);
    await api().get('/api/admin/reports/rebuild/rebuild-nope').set('Authorization', admin.auth).expect(404);
  });

  it('When `npm run reports:rebuild` runs, then it rebuilds from the command line', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/rebuild-reports.ts'], {
      env: { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' },
    });
    expect(stdout).to.match(/rebuild: 100%/);
    expect(stdout).to.match(/rebuild done: \d+ events/);
  });

  it('When the clock schedules are read, then they are valid UTC crons with deterministic job ids', () => {
    const at = new Date('2026-11-22T00:05:00Z');
    const byName = Object.fromEntries(SCHEDULES.map(s => [s.name, s]));
    for (const s of SCHEDULES) {
      expect(cron.validate(s.cron), s.name).to.equal(true);
      expect(s.jobId(at)).to.equal(s.jobId(new Date(at.getTime() + 1000)));
    }
    expect(byName['nightly-snapshot'].jobId(at)).to.equal('snapshot-2026-11-22');
    expect(byName['hourly-webhook-sweep'].jobId(at)).to.equal('webhook-sweep-2026-11-22T00');
    expect(byName['daily-cleanup'].queue).to.equal('housekeeping');
  });

  it('When the nightly snapshot job runs, then it records the closing state per supplier', async () => {
    const job = await testApp()
      .services.queues.queue('analytics')
      .add('snapshot', { at: '2026-11-23T00:05:00Z' });
    await waitFor(async () => (await job.getState()) === 'completed', 10000, 'the snapshot');
    const rows = await testApp()
      .services.orm.em.fork()
      .execute<any[]>("select * from analytics_daily_snapshot where day = '2026-11-22'");
    expect(rows.length).to.be.greaterThan(0);
  });

  it('When the queue dashboard is opened, then ADMIN only (bearer or session)', async () => {
    await api().get('/admin/queues').expect(401);
    await api().get('/admin/queues').set('Authorization', user.auth).expect(403);
    const res = await api().get('/admin/queues').set('Authorization', admin.auth).expect(200);
    expect(res.text).to.match(/<html/i);
    const queues = await api().get('/admin/queues/api/queues').set('Authorization', admin.auth).expect(200);
    const names = queues.body.queues.map((q: any) => q.name);
    expect(names).to.include.members([
      'analytics',
      'low-stock-alerts',
      'webhooks',
      'reports',
      'housekeeping',
    ]);
  });
});
