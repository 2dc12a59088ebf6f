import { expect } from 'chai';
import fc from 'fast-check';
import type { EntityManager } from '@mikro-orm/postgresql';
import { testApp } from '../setup/hooks.js';
import { buildHistory, historyArb } from '../support/random-history.js';
import { compareAll, foldAll, probeArb, RUNS } from '../support/analytics-compare.js';
import { evaluateLowStock } from '../../domain/alerts/evaluate-low-stock.js';

/** Evaluates every pending low-stock event directly, in the given order. */
async function evaluateAll(em: EntityManager, order: (ids: string[]) => string[]) {
  const rows = await em.execute<{ id: string }[]>('select id from outbox_event where alerts_done_at is null');
  for (const id of order(rows.map(r => String(r.id)))) await evaluateLowStock(em.fork(), id, undefined);
}

/** Expected alerts of an item from its events in order: one per downward crossing; open if it ends below. */
async function expectedAlerts(em: EntityManager, itemId: string) {
  const rows = await em.execute<{ payload: any }[]>(
    "select payload from outbox_event where type = 'stock.changed' and aggregate_id = ? order by id",
    [itemId],
  );
  let low = false;
  let opened = 0;
  for (const { payload: p } of rows) {
    const now = !p.deleted && p.minimumQuantity > 0 && p.quantityAfter < p.minimumQuantity;
    if (now && !low) opened += 1;
    low = now;
  }
  return { opened, open: low };
}

describe('Analytics rollups and alerts equal the raw-history oracle (property-based)', function () {
  this.timeout(300000);

  it(`When ${RUNS} random histories are consumed in random order, then every answer equals the oracle's`, async () => {
    const em = () => testApp().services.orm.em.fork();
    await foldAll(em());
    await evaluateAll(em(), ids => ids);
    await fc.assert(
      fc.asyncProperty(historyArb, probeArb, fc.infiniteStream(fc.nat()), async (history, probe, shuffle) => {
        const built = await buildHistory(em(), history);
        const shuffled = (ids: string[]) =>
          ids
            .map(id => ({ id, k: shuffle.next().value as number }))
            .sort((x, y) => x.k - y.k)
            .map(x => x.id);
        await foldAll(em(), shuffled);
        await evaluateAll(em(), shuffled);
        await compareAll(em(), built, probe);
        for (const itemId of built.itemIds) {
          const alerts = await em().execute<{ closed_at: string | null }[]>(
            'select closed_at from low_stock_alert where item_id = ? order by id',
            [itemId],
          );
          const expected = await expectedAlerts(em(), itemId);
          expect(alerts.length, 'one alert per downward crossing').to.equal(expected.opened);
          expect(alerts.filter(a => a.closed_at === null).length, 'open at the end').to.equal(
            expected.open ? 1 : 0,
          );
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});
