import { expect } from 'chai';
import fc from 'fast-check';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AnalyticsOracle } from './analytics-oracle.js';
import type { Built } from './random-history.js';
import { foldPendingEvents } from '../../domain/analytics/fold/fold-pending-events.js';
import { ANALYTICS_CONSUMER } from '../../domain/outbox/consumers.js';
import { drainConsumer } from '../../domain/outbox/drain-consumer.js';
import { addDays } from '../../domain/analytics/date-params.js';
import { stockValueOverTime } from '../../domain/analytics/queries/stock-value-over-time.js';
import { stockPerSupplier } from '../../domain/analytics/queries/stock-per-supplier.js';
import { lowStockCount } from '../../domain/analytics/queries/low-stock-count.js';
import { lowStockItems } from '../../domain/analytics/queries/low-stock-items.js';
import { itemUpdateFrequency } from '../../domain/analytics/queries/item-update-frequency.js';
import { monthlyStockMovement } from '../../domain/analytics/queries/monthly-stock-movement.js';
import { stockUpdates } from '../../domain/analytics/queries/stock-updates.js';
import { dashboardSummary } from '../../domain/analytics/queries/dashboard-summary.js';
import { priceTrend } from '../../domain/analytics/queries/price-trend.js';
import { financialSummary } from '../../domain/analytics/queries/financial-summary.js';
import { reasonBreakdown } from '../../domain/analytics/queries/reason-breakdown.js';
import { changesByEmployee } from '../../domain/analytics/queries/changes-by-employee.js';

export const RUNS = Number(process.env.ANALYTICS_PROPERTY_RUNS ?? 200);

/**
 * Folds every pending analytics event directly, as the consumer does. Small batches (3 by default), so an
 * item's events are split across fold transactions too.
 */
export async function foldAll(em: EntityManager, batchSize = 3) {
  const result = await drainConsumer(em, ANALYTICS_CONSUMER, foldPendingEvents, {
    batchSize,
    rebuildShared: true,
  });
  if (result.failed > 0) throw new Error(`${result.failed} items could not be folded`);
}

export interface Probe {
  a: number;
  b: number;
  useSupplier: boolean;
  granularity: 'daily' | 'weekly' | 'monthly';
  item: number;
}
export const probeArb = fc.record({
  a: fc.nat({ max: 1000 }),
  b: fc.nat({ max: 1000 }),
  useSupplier: fc.boolean(),
  granularity: fc.constantFrom('daily' as const, 'weekly' as const, 'monthly' as const),
  item: fc.nat({ max: 9 }),
});

/** Every analytics answer from the rollups equals the oracle's, for a random window around the history. */
export async function compareAll(em: EntityManager, built: Built, p: Probe): Promise<void> {
  const oracle = await AnalyticsOracle.load(em);
  const span = Math.max(1, (Date.parse(built.lastDay) - Date.parse(built.firstDay)) / 86400000 + 6);
  const d1 = addDays(built.firstDay, -3 + (p.a % span));
  const d2 = addDays(built.firstDay, -3 + (p.b % span));
  const [start, end] = d1 <= d2 ? [d1, d2] : [d2, d1];
  const range = { start, end };
  const supplier = p.useSupplier ? built.supplierIds[p.a % built.supplierIds.length] : undefined;
  const s = supplier ?? null;
  const itemId = built.itemIds[p.item % built.itemIds.length];
  const ctx = `window ${start}..${end} supplier ${supplier ?? '-'}`;

  // Keep the per-day valuation to at most ~70 days so the oracle stays cheap.
  const vEnd = addDays(start, 70) < end ? addDays(start, 70) : end;
  expect(await stockValueOverTime(em, { start, end: vEnd }, s), `N1 ${ctx}`).to.deep.equal(
    oracle.stockValue(start, vEnd, supplier),
  );
  expect(await stockPerSupplier(em), 'N2').to.deep.equal(oracle.stockPerSupplier());
  expect(await lowStockCount(em), 'N3').to.equal(oracle.lowStockCount());
  const sid = built.supplierIds[p.b % built.supplierIds.length];
  expect(await itemUpdateFrequency(em, { supplierId: sid }), 'N4').to.deep.equal(oracle.updateFrequency(sid));
  expect(await lowStockItems(em, sid), 'N5').to.deep.equal(oracle.lowStockItems(sid));
  expect(await monthlyStockMovement(em, range, s), `N6 ${ctx}`).to.deep.equal(
    oracle.monthlyMovement(start, end, supplier),
  );
  const filter = {
    from: new Date(`${start}T00:00:00Z`),
    to: new Date(`${addDays(end, 1)}T00:00:00Z`),
    toInclusive: false,
    supplierId: sid,
    ...(p.a % 3 === 0 ? { minChange: -5 } : {}),
    ...(p.b % 3 === 0 ? { maxChange: 3 } : {}),
    ...(p.a % 4 === 0 ? { createdBy: 'ALICE@example.test' } : {}),
  };
  expect(await stockUpdates(em, filter), `N7 ${ctx}`).to.deep.equal(oracle.stockUpdates(filter));
  expect(await dashboardSummary(em, range, sid), `N9 ${ctx}`).to.deep.equal(oracle.summary(start, end, sid));
  expect(await priceTrend(em, itemId, range, s), `N10 ${ctx}`).to.deep.equal(
    oracle.priceTrend(itemId, start, end, supplier),
  );
  expect(await financialSummary(em, range, s), `N11 ${ctx}`).to.deep.equal(
    oracle.financial(start, end, supplier),
  );
  const itemName = p.item % 2 === 0 ? 'item' : null;
  expect(await reasonBreakdown(em, range, { supplierId: s, itemName }), `X1 ${ctx}`).to.deep.equal(
    oracle.reasonBreakdown(start, end, supplier, itemName ?? undefined),
  );
  // Without a supplier the buckets are read from their totals over all suppliers: every time as well.
  if (supplier !== undefined) {
    const all = `window ${start}..${end} supplier -`;
    expect(await monthlyStockMovement(em, range, null), `N6 ${all}`).to.deep.equal(
      oracle.monthlyMovement(start, end, undefined),
    );
    expect(await financialSummary(em, range, null), `N11 ${all}`).to.deep.equal(
      oracle.financial(start, end, undefined),
    );
  }
  expect(await dashboardSummary(em, range, null), `N9 window ${start}..${end} supplier -`).to.deep.equal(
    oracle.summary(start, end),
  );
  // Without an item name the reason breakdown reads the reason totals of all suppliers or of one: both, every time.
  for (const supplierId of [null, sid])
    expect(
      await reasonBreakdown(em, range, { supplierId, itemName: null }),
      `X1 without an item name ${start}..${end} supplier ${supplierId ?? '-'}`,
    ).to.deep.equal(oracle.reasonBreakdown(start, end, supplierId ?? undefined));
  expect(await changesByEmployee(em, p.granularity, range, s), `X2 ${ctx}`).to.deep.equal(
    oracle.byEmployee(p.granularity, start, end, supplier),
  );
}
