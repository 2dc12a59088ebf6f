import { expect } from 'chai';
import { testApp } from '../setup/hooks.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';
import { createItem, createSupplier, recordStockChange } from '../support/stock-events.js';
import { waitFor } from '../support/wait-for.js';
import { publishEvents } from '../../domain/outbox/publish-events.js';
import { ANALYTICS_CONSUMER } from '../../domain/outbox/consumers.js';
import { markDoneSql, pendingForSql } from '../../domain/outbox/pending-events.js';

describe('Analytics folds are batched, yet one bad event does not stall the others', function () {
  this.timeout(60000);
  let workers: RunningWorkers;
  let poisonId = '';

  before(() => {
    workers = startWorkers(testApp().services, { clock: false });
  });

  after(async () => {
    await workers.close();
    // Leave nothing behind that would send later tests' folds down the fallback path.
    if (poisonId)
      await testApp()
        .services.orm.em.fork()
        .execute(markDoneSql(ANALYTICS_CONSUMER, 'select id, part from outbox_event where id = ?'), [
          poisonId,
        ]);
  });

  it('When a pending event cannot be folded, then other items are still folded through the queue and it stays pending', async () => {
    const services = testApp().services;
    const em = services.orm.em.fork();
    const supplier = (await createSupplier(em)).id;
    const bad = (await createItem(em, { supplierId: supplier })).id;
    const good = (await createItem(em, { supplierId: supplier, price: '2.50' })).id;
    // A stored event whose timestamp no fold can place on a day (pending for the analytics consumer alone, so
    // only it meets the event).
    const [row] = await em.execute<{ id: string }[]>(
      `with e as (insert into outbox_event (type, aggregate_id, payload) values ('stock.changed', ?, ?::jsonb)
                  returning id, part)
       insert into outbox_pending (consumer, part, id) select ${ANALYTICS_CONSUMER.code}, part, id from e returning id`,
      [
        bad,
        JSON.stringify({
          itemId: bad,
          itemName: 'Broken',
          supplierId: supplier,
          supplierName: 'S',
          change: 1,
          quantityBefore: 0,
          quantityAfter: 1,
          minimumQuantity: 0,
          reason: 'RESTOCK',
          priceAtChange: '1.00',
          createdBy: 'factory',
          occurredAt: 'not a timestamp',
          correlationId: null,
        }),
      ],
    );
    poisonId = String(row.id);
    await publishEvents(services.queues, [poisonId], [ANALYTICS_CONSUMER]);

    const goodEvent = await recordStockChange(em, {
      itemId: good,
      change: 4,
      reason: 'RESTOCK',
      at: new Date('2026-03-10T12:00:00Z'),
    });
    await publishEvents(services.queues, [goodEvent], [ANALYTICS_CONSUMER]);

    const done = async (id: string) =>
      (
        await em
          .fork()
          .execute<{ done: boolean }[]>(
            `select not ${pendingForSql([ANALYTICS_CONSUMER], 'o')} as done from outbox_event o where id = ?`,
            [id],
          )
      )[0].done;
    await waitFor(() => done(goodEvent), 20000, 'the good event to be folded');
    const [rollup] = await em
      .fork()
      .execute<{ qty_in: string }[]>(
        "select qty_in from analytics_item_day where item_id = ? and day = '2026-03-10'",
        [good],
      );
    expect(Number(rollup.qty_in)).to.equal(4);
    expect(await done(poisonId)).to.equal(false);
  });
});
