import { expect } from 'chai';
import { testApp } from '../setup/hooks.js';
import { startWorkers } from '../../workers/main.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { ALERTS_CONSUMER, ANALYTICS_CONSUMER } from '../../domain/outbox/consumers.js';
import { markDoneSql } from '../../domain/outbox/pending-events.js';
import { OUTBOX_RETENTION_DAYS } from '../../domain/outbox/purge-outbox.js';
import { runJob } from '../support/run-job.js';

describe('The daily cleanup removes outbox events every consumer is done with', function () {
  this.timeout(30000);

  it('When the housekeeping job runs, then done events past the retention go with their progress rows, and pending or recent ones stay', async () => {
    const { services } = testApp();
    const em = services.orm.em.fork();
    const supplierId = (await createSupplier(em)).id;
    const itemId = (await createItem(em, { supplierId })).id;
    const at = new Date();
    // Three changes, each with its history entry (the history consumer's marker set); the other consumers'
    // markers are set as their runs would.
    const [oldDone, oldPending, recent] = [
      await recordStockChange(em, { itemId, change: 5, reason: 'RESTOCK', at }),
      await recordStockChange(em, { itemId, change: -2, reason: 'SALE', at }),
      await recordStockChange(em, { itemId, change: 1, reason: 'RESTOCK', at }),
    ];
    for (const consumer of [ANALYTICS_CONSUMER, ALERTS_CONSUMER])
      await em.execute(markDoneSql(consumer, 'select id, part from outbox_event where id in (?, ?, ?)'), [
        oldDone,
        oldPending,
        recent,
      ]);
    // The first two are older than the retention; the second is pending again for the analytics fold (an event
    // a consumer has not applied yet is kept however old it is). No sweeper, doorbell or left-over job wakes the fold.
    await em.execute(
      `update outbox_event set created_at = now() - make_interval(days => ?, hours => 1) where id in (?, ?)`,
      [OUTBOX_RETENTION_DAYS, oldDone, oldPending],
    );
    await em.execute('update outbox_pending set done_at = null where consumer = ? and id = ?', [
      ANALYTICS_CONSUMER.code,
      oldPending,
    ]);
    // Every job of the fold's queue goes, whatever its state: an earlier test's job left waiting, delayed for a
    // retry or active under a worker that is gone (stall detection would run it again) would wake the fold.
    await services.queues.queue(ANALYTICS_CONSUMER.queue).obliterate({ force: true });
    const history = async () =>
      (
        await em
          .fork()
          .execute<{ n: string }[]>('select count(*) as n from stock_history where item_id = ?', [itemId])
      )[0].n;
    const historyBefore = await history();

    const workers = startWorkers(services, { clock: false, relay: false });
    try {
      const { job } = await runJob(services, 'housekeeping', 'cleanup', `purge-${Date.now()}`, 20000);
      // Later tests count the housekeeping jobs they run.
      await job.remove();
    } finally {
      await workers.close();
    }

    const left = await em.fork().execute<{ id: string; progress: string }[]>(
      `select e.id::text as id, (select count(*) from outbox_pending p where p.id = e.id) as progress
           from outbox_event e where e.id in (?, ?, ?) order by e.id`,
      [oldDone, oldPending, recent],
    );
    expect(left.map(r => [r.id, Number(r.progress)])).to.deep.equal([
      [oldPending, 3],
      [recent, 3],
    ]);
    const [orphans] = await em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from outbox_pending where id = ?', [oldDone]);
    expect(Number(orphans.n)).to.equal(0);
    // The stock history is the record of every change: the purge leaves it whole.
    expect(await history()).to.equal(historyBefore);
    expect(Number(historyBefore)).to.equal(3);
  });
});
