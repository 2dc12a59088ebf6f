import { backtest } from './replenishment-backtest.js';
import { printTable } from './support.js';
import { scaleBench } from './replenishment-scale.js';
import { holdMachineForBench } from './machine-lock.js';

/**
 * `npm run bench:replenishment`: the backtest of Stockroom's replenishment policy (the contract's formulas,
 * default settings) against the low-stock items rule, per demand pattern (scripts/bench/replenishment-backtest.ts). Figures,
 * never assertions; the same seed draws the same demand every run. Then the replenishment run and the suggestions at REPLENISHMENT_BENCH_ITEMS
 * items (default 100000; 0 skips them), scripts/bench/replenishment-scale.ts.
 */
holdMachineForBench();
const started = Date.now();
const scores = backtest(Number(process.env.REPLENISHMENT_BENCH_SEED ?? 41));
printTable(
  'Backtest: 1,000 items x 365 days per pattern, lost sales, days 57-365 scored',
  scores.map(s => ({
    pattern: s.pattern,
    policy: s.policy,
    'fill rate %': (s.fillRate * 100).toFixed(2),
    'stock-out days': s.stockOutDays,
    'avg inventory value': s.averageInventoryValue.toFixed(2),
    'orders placed': s.ordersPlaced,
  })),
);
const byPattern = new Map<string, typeof scores>();
for (const s of scores) byPattern.set(s.pattern, [...(byPattern.get(s.pattern) ?? []), s]);
printTable(
  'Stockroom against the N5 rule',
  [...byPattern].map(([pattern, [ours, n5]]) => ({
    pattern,
    'fill rate difference (points)': ((ours.fillRate - n5.fillRate) * 100).toFixed(2),
    'inventory value ratio': (ours.averageInventoryValue / n5.averageInventoryValue).toFixed(3),
  })),
);
console.log(`\nbacktest took ${((Date.now() - started) / 1000).toFixed(1)} s`);

const items = Number(process.env.REPLENISHMENT_BENCH_ITEMS ?? 100_000);
if (items > 0) await scaleBench(items);
