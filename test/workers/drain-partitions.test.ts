import { pendingForSql } from '../../domain/outbox/pending-events.js';
import { expect } from 'chai';
import type { EntityManager } from '@mikro-orm/postgresql';
import { testApp } from '../setup/hooks.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { ALERTS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../../domain/outbox/consumers.js';
import { drainConsumer, OUTBOX_PARTITIONS, type DrainResult } from '../../domain/outbox/drain-consumer.js';
import { nativePool } from '../../domain/shared/native-transaction.js';
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

  it('When a backlog fills batches, then each later batch takes a few partitions and every event is applied once', async () => {
    const em = testApp().services.orm.em.fork();
    await drainHistory(em);
    const items = await itemsInEveryPartition(em);
    for (let round = 0; round < 3; round++) for (const itemId of items) await restock(em, itemId, 1);

    // Batches of 10 over 48 events: the first takes every partition, the later ones (after a full batch) a few at
    // a time, each starting after the last partition of the one before; every item's rows stay in event order.
    const result = await drainConsumer(em, STOCK_HISTORY_CONSUMER, recordStockChanges, {
      oneStatement: recordStockChangesAlone,
      batchSize: 10,
    });
    expect(result).to.include({ applied: 3 * OUTBOX_PARTITIONS, failed: 0 });
    const rows = await em.execute<{ item_id: string; n: string; ordered: boolean }[]>(
      `select item_id::text as item_id, count(*) as n, bool_and(prev is null or outbox_event_id > prev) as ordered
         from (select item_id, outbox_event_id,
                      lag(outbox_event_id) over (partition by item_id order by id) as prev
                 from stock_history where item_id in (?)) h
        group by item_id`,
      [items],
    );
    expect(rows).to.have.length(OUTBOX_PARTITIONS);
    for (const row of rows)
      expect({ n: Number(row.n), ordered: row.ordered }).to.deep.equal({ n: 3, ordered: true });
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
});
