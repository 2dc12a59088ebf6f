import { expect } from 'chai';
import pg from 'pg';
import { testApp } from '../setup/hooks.js';
import { startWorkers } from '../../workers/main.js';
import { STOCK_HISTORY_CONSUMER } from '../../domain/outbox/consumers.js';
import { SLOT_KEY_BASE } from '../../domain/outbox/run-slot.js';
import { ringDoorbells } from '../../domain/outbox/publish-events.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { waitFor } from '../support/wait-for.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';

describe('Outbox consumer run slots (OUTBOX_CONSUMER_RUNS)', () => {
  it('When another process holds the only run of a consumer, then a doorbell job waits for it and drains as soon as that process dies', async () => {
    const { services } = testApp();
    expect(services.config.outboxConsumerRuns).to.equal(1);
    const em = services.orm.em.fork();
    const supplier = await createSupplier(em);
    const { id: itemId } = await createItem(em, { supplierId: supplier.id });
    const entries = async () =>
      Number(
        (
          await em
            .fork()
            .execute<{ n: string }[]>('select count(*) as n from stock_history where item_id = ?', [itemId])
        )[0].n,
      );

    // Another worker process's run of the stock-history consumer: its slot, held on a connection of its own.
    const otherProcess = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await otherProcess.connect();
    otherProcess.on('error', () => undefined);
    await otherProcess.query('select pg_advisory_lock($1::int, $2::int)', [
      STOCK_HISTORY_CONSUMER.lockNamespace,
      SLOT_KEY_BASE,
    ]);
    const workers = startWorkers(services, { clock: false, relay: false });
    try {
      await recordStockChange(em, {
        itemId,
        change: 7,
        reason: 'RESTOCK',
        at: new Date(),
        withHistory: false,
      });
      await ringDoorbells(services.queues, [STOCK_HISTORY_CONSUMER]);
      const queue = services.queues.queue('stock-history');
      // The doorbell job has started and waits for the slot: its event stays pending meanwhile.
      await waitFor(
        async () => (await queue.getJobCounts('active')).active === 1,
        10000,
        'an active doorbell job',
      );
      const waiting = await waitFor(
        async () =>
          (
            await em
              .fork()
              .execute<{ n: string }[]>(
                "select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'advisory'",
              )
          )[0].n !== '0',
        10000,
        'the run waiting for its slot',
      );
      expect(waiting).to.equal(true);
      expect(await entries()).to.equal(0);

      // The other process dies (its socket closes without unlocking): the waiting run drains, long before a
      // stalled job would be noticed (WORKER_STALLED_INTERVAL_MS) or the sweeper rang again.
      (
        otherProcess as unknown as { connection: { stream: { destroy(): void } } }
      ).connection.stream.destroy();
      await waitFor(async () => (await entries()) === 1, 10000, 'the history entry');
    } finally {
      await workers.close();
      await otherProcess.end().catch(() => undefined);
    }
  });
});
