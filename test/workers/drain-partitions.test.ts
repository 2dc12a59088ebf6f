import { pendingForSql } from '../../domain/outbox/pending-events.js';
import { expect } from 'chai';
import type { EntityManager } from '@mikro-orm/postgresql';
import { testApp } from '../setup/hooks.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { ALERTS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../../domain/outbox/consumers.js';
import {
  drainConsumer,
  OUTBOX_PARTITIONS,
  type ConsumerBatch,
  type DrainResult,
} from '../../domain/outbox/drain-consumer.js';
import type { OutboxConsumer } from '../../domain/outbox/consumers.js';
import { nativePool, type SqlRun } from '../../domain/shared/native-transaction.js';
import { waitFor } from '../support/wait-for.js';
import { evaluateLowStock } from '../../domain/alerts/evaluate-low-stock.js';
import {
  recordStockChanges,
  recordStockChangesAlone,
} from '../../domain/stock-history/record-stock-changes.js';

const drainHistory = (em: EntityManager) =>
  drainConsumer(em, STOCK_HISTORY_CONSUMER, recordStockChanges, { oneStatement: recordStockChangesAlone });
const drainAlerts = (em: EntityManager) =>
  drainConsumer(em, ALERTS_CONSUMER, evaluateLowStock(undefined), { rebuildShared: true });

/** Items whose events fall into every partition (an item's partition is a hash of its id). */
async function itemsInEveryPartition(em: EntityManager): Promise<string[]> {
  const supplier = await createSupplier(em);
  const byPart = new Map<number, string>();
  while (byPart.size < OUTBOX_PARTITIONS) {
    const { id } = await createItem(em, { supplierId: supplier.id });
    const [row] = await em.execute<{ part: number }[]>('select (hashtext(?) & 15)::int as part', [id]);
    if (!byPart.has(Number(row.part))) byPart.set(Number(row.part), id);
  }
  return [...byPart.values()];
}

/** One outbox event (a restock of `change`) for the item, its history left to the consumer. */
const restock = (em: EntityManager, itemId: string, change: number) =>
  recordStockChange(em, { itemId, change, reason: 'RESTOCK', at: new Date(), withHistory: false });

/** Each of the items has `n` history entries, one per event (none twice), in event order. */
async function expectHistoryOfEach(em: EntityManager, items: string[], n: number): Promise<void> {
  const rows = await em.execute<{ n: string; events: string; ordered: boolean }[]>(
    `select count(*) as n, count(distinct outbox_event_id) as events,
            bool_and(prev is null or outbox_event_id > prev) as ordered
       from (select item_id, outbox_event_id,
                    lag(outbox_event_id) over (partition by item_id order by id) as prev
               from stock_history where item_id in (?)) h
      group by item_id`,
    [items],
  );
  expect(rows).to.have.length(items.length);
  for (const row of rows)
    expect({ n: Number(row.n), events: Number(row.events), ordered: row.ordered }).to.deep.equal({
      n,
      events: n,
      ordered: true,
    });
}

describe('Consumer batches over the outbox partitions', () => {
  it('When a trickle of events is spread over every partition, then one batch applies them all', async () => {
    const em = testApp().services.orm.em.fork();
    // Whatever earlier tests left pending is applied first, so the counts below are this test's alone.
    await drainHistory(em);
    await drainAlerts(em);
    const items = await itemsInEveryPartition(em);
    for (const itemId of items) await restock(em, itemId, 5);

    // With four partitions per batch this took four batches (and a run favoured the partitions it looked at first).
    const history = await drainHistory(em);
    expect(history).to.include({ applied: OUTBOX_PARTITIONS, batches: 1, failed: 0 });
    const alerts = await drainAlerts(em);
    expect(alerts).to.include({ applied: OUTBOX_PARTITIONS, batches: 1, failed: 0 });
    const [left] = await em.execute<{ n: string }[]>(
      `select count(*) as n from outbox_event o
        where aggregate_id in (?) and ${pendingForSql([STOCK_HISTORY_CONSUMER, ALERTS_CONSUMER], 'o')}`,
      [items],
    );
    expect(Number(left.n)).to.equal(0);
  });

  it('When a backlog fills batches, then each batch takes just enough partitions to fill it and every event is applied once', async () => {
    const em = testApp().services.orm.em.fork();
    await drainHistory(em);
    const items = await itemsInEveryPartition(em);
    for (let round = 0; round < 3; round++) for (const itemId of items) await restock(em, itemId, 1);

    // Batches of 10 over 48 events (3 per partition): each batch takes the partitions that fill it (four), starting
    // after the last partition of the one before; every item's rows stay in event order.
    const result = await drainConsumer(em, STOCK_HISTORY_CONSUMER, recordStockChanges, {
      oneStatement: recordStockChangesAlone,
      batchSize: 10,
    });
    expect(result).to.include({ applied: 3 * OUTBOX_PARTITIONS, failed: 0 });
    expect(result.batches).to.equal(Math.ceil((3 * OUTBOX_PARTITIONS) / 10));
    await expectHistoryOfEach(em, items, 3);
  });

  it('When the doorbell is freed only after the run has looked, then the run looks once more before it ends', async () => {
    const em = testApp().services.orm.em.fork();
    await drainHistory(em);
    const [itemId] = await itemsInEveryPartition(em);
    await restock(em, itemId, 2);
    const [{ part }] = await em.execute<{ part: number }[]>('select (hashtext(?) & 15)::int as part', [
      itemId,
    ]);

    // Another holder has the event's partition, so the run's first take finds nothing it can take; the doorbell
    // is freed only once the run waits for it (the second `then` on it: the first is the run noting when it is).
    let resolveFreed!: () => void;
    const freeing = new Promise<void>(resolve => (resolveFreed = resolve));
    let waits = 0;
    const freed = {
      then: (...args: Parameters<Promise<void>['then']>) => {
        waits += 1;
        return freeing.then(...args);
      },
    } as Promise<void>;
    const holder = await (await nativePool(em)).connect();
    let run: Promise<DrainResult>;
    try {
      await holder.query('select pg_advisory_lock($1::int, $2::int)', [
        STOCK_HISTORY_CONSUMER.lockNamespace,
        part,
      ]);
      run = drainConsumer(em, STOCK_HISTORY_CONSUMER, recordStockChanges, {
        oneStatement: recordStockChangesAlone,
        freed,
      });
      await waitFor(() => waits >= 2, 10000, 'the run to wait for the doorbell');
    } finally {
      await holder.query('select pg_advisory_unlock_all()');
      holder.release();
    }
    resolveFreed();
    expect(await run!).to.include({ applied: 1, failed: 0 });
  });

  it('When events keep coming a little apart, then one run goes on applying them instead of ending at each gap', async () => {
    const em = testApp().services.orm.em.fork();
    await drainHistory(em);
    const items = await itemsInEveryPartition(em);

    // Twenty events, one every 10 ms (gaps far shorter than RUN_LINGER_MS), written while ONE run drains: a run
    // that ended as soon as a take found nothing would apply the first one or two and leave the rest to
    // doorbell jobs. A slow machine may stretch a gap past the linger once, so half is the bound.
    const writer = (async () => {
      for (let i = 0; i < 20; i++) {
        await restock(em.fork(), items[i % items.length], 1);
        await new Promise(resolve => setTimeout(resolve, 10));
      }
    })();
    await waitFor(
      async () => {
        const [row] = await em.execute<{ n: string }[]>(
          `select count(*) as n from outbox_event o where aggregate_id in (?) and ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}`,
          [items],
        );
        return Number(row.n) > 0;
      },
      10000,
      'the first event',
    );
    const run = await drainHistory(em.fork());
    await writer;
    expect(run.failed).to.equal(0);
    expect(run.applied).to.be.at.least(10);
    await drainHistory(em);
  });

  describe('When eight runs of one consumer drain a backlog at once (one per worker process)', () => {
    const RUNS = 8;

    /**
     * RUNS runs of `consumer` over a backlog of 6 events per partition in batches of 4, each run's first batch held
     * (after its take, before its write) until all RUNS runs are inside a first batch at once: each then holds
     * partitions of its own at the same time. A design in which fewer runs can hold partitions during a backlog
     * (a first take of every partition, 4 partitions per backlog batch: at most 4 runs) never gets there.
     */
    async function drainWithEightRuns(
      consumer: OutboxConsumer,
      gate: (batch: ConsumerBatch, atWrite: () => Promise<void>) => ConsumerBatch,
      options: { rebuildShared?: boolean } = {},
    ): Promise<{ items: string[]; results: DrainResult[] }> {
      const em = testApp().services.orm.em.fork();
      await drainConsumer(
        em,
        consumer,
        gate(noGate, async () => undefined),
        options,
      );
      const items = await itemsInEveryPartition(em);
      for (let round = 0; round < 6; round++) for (const itemId of items) await restock(em, itemId, 1);
      let inFirstBatch = 0;
      const allIn = waitFor(() => inFirstBatch === RUNS, 20000, `${RUNS} runs inside a batch at once`);
      allIn.catch(() => undefined);
      const results = await Promise.all(
        Array.from({ length: RUNS }, () => {
          let first = true;
          const atWrite = async () => {
            if (!first) return;
            first = false;
            inFirstBatch += 1;
            await allIn;
          };
          return drainConsumer(em.fork(), consumer, gate(noGate, atWrite), { ...options, batchSize: 4 });
        }),
      );
      return { items, results };
    }

    // Replaced by each gate with the consumer's own batch.
    const noGate: ConsumerBatch = async () => 0;

    it('then the stock history: each run takes work, none starves, every event is recorded once and in order', async () => {
      // In a transaction per batch (the consumer's fallback path): the gate waits inside it, after its take.
      const history: (b: ConsumerBatch, atWrite: () => Promise<void>) => ConsumerBatch =
        (_, atWrite) => async (sql, parts, limit, itemId) => {
          await atWrite();
          return recordStockChanges(sql, parts, limit, itemId);
        };
      const { items, results } = await drainWithEightRuns(STOCK_HISTORY_CONSUMER, history);

      for (const result of results) expect(result.applied).to.be.greaterThan(0);
      expect(results.reduce((sum, r) => sum + r.applied, 0)).to.equal(6 * OUTBOX_PARTITIONS);
      expect(results.every(r => r.failed === 0)).to.equal(true);
      await expectHistoryOfEach(testApp().services.orm.em.fork(), items, 6);
    });

    it('then the low-stock alerts (held batches, session locks): each run takes work and every event is marked once', async () => {
      // The held fast path: the gate waits between its take-and-read statement and its write.
      const alerts = (_: ConsumerBatch, atWrite: () => Promise<void>): ConsumerBatch => {
        const batch = evaluateLowStock(undefined);
        const held = batch.held!;
        batch.held = (run, take, params, limit, taken) => {
          let statements = 0;
          const gated: SqlRun = async (text, values) => {
            if (statements++ === 1) await atWrite();
            return run(text, values);
          };
          return held(gated, take, params, limit, taken);
        };
        return batch;
      };
      const { items, results } = await drainWithEightRuns(ALERTS_CONSUMER, alerts, { rebuildShared: true });

      for (const result of results) expect(result.applied).to.be.greaterThan(0);
      expect(results.reduce((sum, r) => sum + r.applied, 0)).to.equal(6 * OUTBOX_PARTITIONS);
      expect(results.every(r => r.failed === 0)).to.equal(true);
      const em = testApp().services.orm.em.fork();
      const [left] = await em.execute<{ n: string }[]>(
        `select count(*) as n from outbox_event o where aggregate_id in (?) and ${pendingForSql([ALERTS_CONSUMER], 'o')}`,
        [items],
      );
      expect(Number(left.n)).to.equal(0);
      // The stock history of these events, which later suites read as the record.
      await drainHistory(em);
    });
  });
});
