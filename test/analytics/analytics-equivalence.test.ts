import { expect } from 'chai';
import fc from 'fast-check';
import type { EntityManager } from '@mikro-orm/postgresql';
import { resetTestDatabase, startTestApp, type TestApp } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { buildHistory, historyArb } from '../support/random-history.js';
import { compareAll, foldAll, probeArb, RUNS } from '../support/analytics-compare.js';
import { evaluateLowStock } from '../../domain/alerts/evaluate-low-stock.js';
import { ALERTS_CONSUMER } from '../../domain/outbox/consumers.js';
import { drainConsumer } from '../../domain/outbox/drain-consumer.js';

/** Evaluates every pending low-stock event directly, as the consumer does, in batches of `batchSize`. */
async function evaluateAll(em: EntityManager, batchSize: number) {
  const result = await drainConsumer(em, ALERTS_CONSUMER, evaluateLowStock(undefined), {
    batchSize,
    rebuildShared: true,
  });
  if (result.failed > 0) throw new Error(`${result.failed} items could not be evaluated`);
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

/**
 * A database of its own: answers over all suppliers compare every row of the database with the oracle, so rows
 * that other suites leave (in whatever order they ran) must not be there.
 */
const EQUIVALENCE_DATABASE_URL = `${TEST_DATABASE_URL}_equivalence`;

describe('Analytics rollups and alerts equal the raw-history oracle (property-based)', function () {
  this.timeout(300000);
  let app: TestApp;

  before(async () => {
    await resetTestDatabase(EQUIVALENCE_DATABASE_URL);
    app = await startTestApp({ DATABASE_URL: EQUIVALENCE_DATABASE_URL });
  });
  after(async () => app?.close());

  it(`When ${RUNS} random histories are consumed in batches of random size, then every answer equals the oracle's`, async () => {
    const em = () => app.services.orm.em.fork();
    await foldAll(em());
    await evaluateAll(em(), 1000);
    await fc.assert(
      fc.asyncProperty(historyArb, probeArb, fc.infiniteStream(fc.nat()), async (history, probe, shuffle) => {
        const built = await buildHistory(em(), history);
        // Batches of a random size split the items' events (crossings included) across transactions.
        const batchSize = () => 1 + ((shuffle.next().value as number) % 7);
        await foldAll(em(), batchSize());
        await evaluateAll(em(), batchSize());
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
