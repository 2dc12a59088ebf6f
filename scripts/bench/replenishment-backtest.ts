import {
  addDays,
  computedLevels,
  demandWindow,
  suggest,
  windowLength,
} from '../../domain/replenishment/replenishment-formulas.js';
import { serviceLevelZ } from '../../domain/replenishment/normal-quantile.js';

/**
 * The backtest of issue 41: per demand pattern, ITEMS items for DAYS days with a seeded random generator;
 * lost sales (what stock cannot serve is lost, and a policy sees only what was served); each day a policy may
 * order, and an order arrives after the item's lead time; days SCORE_FROM..DAYS (1-based) are scored.
 */
export const ITEMS = 1000;
export const DAYS = 365;
const SCORE_FROM = 57;
const START_COVER_DAYS = 30;
const START_DAY = '2026-01-01';
/** The contract's defaults (REPLENISHMENT_*). */
const DEMAND_DAYS = 56;
const COVER_DAYS = 14;
const Z = serviceLevelZ(0.95);

/** mulberry32: a small seeded generator, so every run draws the same demand. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Poisson draw (Knuth's product of uniforms; means here stay below a few hundred). */
function poisson(random: () => number, mean: number): number {
  if (mean <= 0) return 0;
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k++;
  return k;
}

export interface Pattern {
  name: string;
  /** The expected demand of day `t` (0-based) for an item of base mean `mean`. */
  expected(mean: number, t: number): number;
  /** One day's demand. */
  draw(random: () => number, mean: number, t: number): number;
}

const weekend = (t: number) => {
  const weekday = new Date(Date.parse(`${START_DAY}T00:00:00Z`) + t * 86_400_000).getUTCDay();
  return weekday === 0 || weekday === 6;
};

export const PATTERNS: Pattern[] = [
  { name: 'steady', expected: mean => mean, draw: (r, mean) => poisson(r, mean) },
  {
    name: 'weekly seasonal',
    expected: (mean, t) => (weekend(t) ? 2 * mean : mean),
    draw: (r, mean, t) => poisson(r, weekend(t) ? 2 * mean : mean),
  },
  {
    name: 'rising trend',
    expected: (mean, t) => mean * (1 + t / DAYS),
    draw: (r, mean, t) => poisson(r, mean * (1 + t / DAYS)),
  },
  {
    // 80 % of days without demand; a lump on the others, the same mean per day as a steady item.
    name: 'intermittent',
    expected: mean => mean,
    draw: (r, mean) => (r() < 0.8 ? 0 : 1 + poisson(r, 5 * mean - 1)),
  },
];

/** A policy: how much to order at the end of a day (0: nothing), from what it may see. */
interface PolicyView {
  t: number;
  quantity: number;
  onOrder: number;
  /** Units served per day so far (index = day). */
  served: readonly number[];
  leadTimeDays: number;
}
type Policy = (view: PolicyView) => number;

/** Stockroom: the contract's formulas (minimumQuantity 0, no own levels, default settings). */
const stockroom: Policy = ({ t, quantity, onOrder, served, leadTimeDays }) => {
  const today = addDays(START_DAY, t);
  const w = windowLength(START_DAY, today, DEMAND_DAYS);
  const window = demandWindow(served.slice(Math.max(0, t - w + 1), t + 1));
  // Days of the window before the first day had no movement (0): only the length counts them.
  window.windowDays = w;
  const levels = computedLevels(window, leadTimeDays, Z, COVER_DAYS);
  const item = {
    quantity,
    onOrderQuantity: onOrder,
    minimumQuantity: 0,
    ownReorderPoint: null,
    ownOrderUpToQuantity: null,
  };
  return suggest(window, levels, item, leadTimeDays, today).suggestedQuantity ?? 0;
};

/** The low-stock items: every day while below the minimum, order up to twice the minimum, blind to what is on order. */
const n5 =
  (minimum: number): Policy =>
  ({ quantity }) =>
    quantity < minimum ? 2 * minimum - quantity : 0;

export interface Score {
  pattern: string;
  policy: string;
  fillRate: number;
  stockOutDays: number;
  averageInventoryValue: number;
  ordersPlaced: number;
}

interface ItemSetup {
  mean: number;
  leadTimeDays: number;
  priceCents: number;
  demand: number[];
}

function simulate(item: ItemSetup, policy: Policy) {
  const arrivals = new Map<number, number>();
  const served: number[] = [];
  let quantity = Math.round(START_COVER_DAYS * item.mean);
  let onOrder = 0;
  const score = { demanded: 0, served: 0, stockOutDays: 0, inventoryCents: 0, orders: 0 };
  for (let t = 0; t < DAYS; t++) {
    const arriving = arrivals.get(t) ?? 0;
    quantity += arriving;
    onOrder -= arriving;
    const sold = Math.min(quantity, item.demand[t]);
    quantity -= sold;
    served.push(sold);
    const order = policy({ t, quantity, onOrder, served, leadTimeDays: item.leadTimeDays });
    if (order > 0) {
      // Arrives after the lead time: at the start of day t + L (the next day at the earliest).
      const at = t + Math.max(1, item.leadTimeDays);
      arrivals.set(at, (arrivals.get(at) ?? 0) + order);
      onOrder += order;
    }
    if (t + 1 >= SCORE_FROM) {
      score.demanded += item.demand[t];
      score.served += sold;
      if (sold < item.demand[t]) score.stockOutDays++;
      score.inventoryCents += quantity * item.priceCents;
      if (order > 0) score.orders++;
    }
  }
  return score;
}

/** Runs every pattern under both policies and answers one score per pattern and policy. */
export function backtest(seed = 41): Score[] {
  const scores: Score[] = [];
  for (const [index, pattern] of PATTERNS.entries()) {
    const random = seededRandom(seed * 1000 + index);
    const items: ItemSetup[] = Array.from({ length: ITEMS }, () => {
      const mean = 0.5 + random() * 49.5;
      const leadTimeDays = 2 + Math.floor(random() * 20);
      const priceCents = 100 + Math.floor(random() * 9900);
      const demand = Array.from({ length: DAYS }, (_, t) => pattern.draw(random, mean, t));
      return { mean, leadTimeDays, priceCents, demand };
    });
    const policies: [string, (item: ItemSetup) => Policy][] = [
      ['Stockroom', () => stockroom],
      ['N5 rule', item => n5(Math.round((14 * item.demand.slice(0, 56).reduce((a, b) => a + b, 0)) / 56))],
    ];
    for (const [name, policyFor] of policies) {
      const total = { demanded: 0, served: 0, stockOutDays: 0, inventoryCents: 0, orders: 0 };
      for (const item of items) {
        const s = simulate(item, policyFor(item));
        total.demanded += s.demanded;
        total.served += s.served;
        total.stockOutDays += s.stockOutDays;
        total.inventoryCents += s.inventoryCents;
        total.orders += s.orders;
      }
      scores.push({
        pattern: pattern.name,
        policy: name,
        fillRate: total.served / total.demanded,
        stockOutDays: total.stockOutDays,
        averageInventoryValue: total.inventoryCents / 100 / (DAYS - SCORE_FROM + 1),
        ordersPlaced: total.orders,
      });
    }
  }
  return scores;
}
