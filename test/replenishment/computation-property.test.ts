import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import type { EntityManager } from '@mikro-orm/postgresql';
import { testApp } from '../setup/hooks.js';
import { computeReplenishment } from '../../domain/replenishment/compute-replenishment.js';
import { pageSuggestions } from '../../domain/replenishment/page-suggestions.js';
import { serviceLevelZ } from '../../domain/replenishment/normal-quantile.js';
import {
  addDays,
  computedLevels,
  dayDemand,
  demandWindow,
  suggest,
  windowLength,
} from '../../domain/replenishment/replenishment-formulas.js';

const REASONS = [
  'SALE',
  'DAMAGED',
  'EXPIRED',
  'SCRAPPED',
  'DESTROYED',
  'LOST',
  'RETURN',
  'RETURNED_TO_SUPPLIER',
  'MANUAL_ADJUSTMENT',
  'INVENTORY_COUNT',
  'RESTOCK',
  'INITIAL_STOCK',
];

interface ReasonRow {
  daysAgo: number;
  reason: string;
  increase: number;
  decrease: number;
}

interface Item {
  ageDays: number;
  quantity: number;
  onOrder: number;
  minimum: number;
  levels: { rop: number | null; out: number | null };
  rows: ReasonRow[];
}

const levelsArb = fc.oneof(
  fc.record({ rop: fc.constant(null), out: fc.constant(null) }),
  fc.record({ rop: fc.integer({ min: 0, max: 300 }), out: fc.constant(null) }),
  fc.record({ rop: fc.constant(null), out: fc.integer({ min: 0, max: 600 }) }),
  fc
    .tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 300 }))
    .map(([rop, extra]) => ({ rop, out: rop + extra })),
);

const itemArb: fc.Arbitrary<Item> = fc.record({
  ageDays: fc.integer({ min: 0, max: 90 }),
  quantity: fc.integer({ min: 0, max: 400 }),
  onOrder: fc.integer({ min: 0, max: 100 }),
  minimum: fc.integer({ min: 0, max: 60 }),
  levels: levelsArb,
  rows: fc.array(
    fc.record({
      daysAgo: fc.integer({ min: 0, max: 70 }),
      reason: fc.constantFrom(...REASONS),
      increase: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 })),
      decrease: fc.integer({ min: 0, max: 60 }),
    }),
    { maxLength: 40 },
  ),
});

const caseArb = fc.record({
  leadTime: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
  items: fc.array(itemArb, { minLength: 1, maxLength: 4 }),
});

/** "How a suggestion is computed", read from the contract's text on its own (exact rationals where it says so). */
function fromContractText(
  item: Item,
  today: string,
  settings: { demandDays: number; coverDays: number; serviceLevelZ: number },
  lead: number,
) {
  const days = Math.min(settings.demandDays, Math.max(7, Math.min(item.ageDays, 10_000) + 1));
  const demand: number[] = [];
  for (let ago = days - 1; ago >= 0; ago--) {
    let net = 0;
    for (const r of item.rows)
      if (
        r.daysAgo === ago &&
        ['SALE', 'DAMAGED', 'EXPIRED', 'SCRAPPED', 'DESTROYED', 'LOST'].includes(r.reason)
      )
        net += r.decrease - r.increase;
    demand.push(net < 0 ? 0 : net);
  }
  const total = demand.reduce((a, b) => a + b, 0);
  const mean = total / days;
  const s = Math.sqrt(demand.reduce((a, q) => a + (q - mean) ** 2, 0) / days);
  const t = settings.serviceLevelZ * s * Math.sqrt(lead);
  // ceil(total x L / days + t), the first term an exact fraction, t as the exact value of its double.
  const [tn, td] = exactFraction(t);
  const num = BigInt(total * lead) * td + tn * BigInt(days);
  const den = BigInt(days) * td;
  const computedRop = Math.max(item.minimum, Number((num + den - 1n) / den));
  const computedOut = computedRop + Math.ceil((total * settings.coverDays) / days);
  const rop = Math.min(999999, item.levels.rop ?? computedRop);
  const out = Math.min(999999, Math.max(item.levels.out ?? computedOut, rop + 1));
  const position = item.quantity + item.onOrder;
  const due = position <= rop && (mean > 0 || item.quantity < item.minimum || item.levels.rop !== null);
  const cover = mean > 0 ? Math.floor((item.quantity * days) / total) : null;
  const stockout = cover === null ? null : addDays(today, cover);
  return {
    windowDays: days,
    windowDemand: total,
    s,
    suggestedQuantity: due && out - position >= 1 ? out - position : null,
    reorderPoint: rop,
    orderUpToQuantity: out,
    daysOfCover: cover,
    projectedStockoutDate: stockout,
    orderByDate: stockout === null ? null : addDays(today, Math.max(0, cover! - lead)),
  };
}

/** The rows of each (day, reason) summed, none before the item's creation day. */
function mergeRows(rows: ReasonRow[], ageDays: number): ReasonRow[] {
  const merged = new Map<string, ReasonRow>();
  for (const r of rows.filter(r => r.daysAgo <= ageDays)) {
    const key = `${r.daysAgo}/${r.reason}`;
    const m = merged.get(key) ?? { ...r, increase: 0, decrease: 0 };
    m.increase += r.increase;
    m.decrease += r.decrease;
    merged.set(key, m);
  }
  return [...merged.values()];
}

/** A double as numerator/denominator BigInts, exactly. */
function exactFraction(x: number): [bigint, bigint] {
  if (x === 0) return [0n, 1n];
  let den = 1n;
  let value = x;
  while (!Number.isInteger(value)) {
    value *= 2;
    den *= 2n;
  }
  return [BigInt(value), den];
}

describe('Replenishment: the SQL run equals the pure function and the contract text (property)', function () {
  this.timeout(300000);

  it('When random demand, minimums, own levels, lead times and on-order quantities are computed, then all three agree', async () => {
    const services = testApp().services;
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ leadTime, items: generated }) => {
        // Rows of one (day, reason) merged, as the rollup's key holds them (never mutating the generated value).
        const items = generated.map(item => ({ ...item, rows: mergeRows(item.rows, item.ageDays) }));
        const em = services.orm.em.fork();
        const today = new Date().toISOString().slice(0, 10);
        const [supplier] = await em.execute<{ id: string }[]>(
          'insert into supplier (name, created_by, lead_time_days) values (?, ?, ?) returning id',
          [`Prop ${randomUUID()}`, 'property', leadTime],
        );
        const ids: string[] = [];
        for (const item of items) {
          const [row] = await em.execute<{ id: string }[]>(
            `insert into inventory_item (name, quantity, price, minimum_quantity, supplier_id, created_by, created_at,
               on_order_quantity, reorder_point, order_up_to_quantity)
             values (?, ?, 1.25, ?, ?, 'property', (?::date - ?::int) + interval '13 hours', ?, ?, ?) returning id`,
            [
              `Prop ${randomUUID()}`,
              item.quantity,
              item.minimum,
              supplier.id,
              today,
              item.ageDays,
              item.onOrder,
              item.levels.rop,
              item.levels.out,
            ],
          );
          ids.push(row.id);
          for (const r of item.rows)
            await em.execute(
              `insert into analytics_reason_day (item_id, day, supplier_key, reason, item_name, entries, increase, decrease)
               values (?, ?::date - ?::int, ?, ?, 'prop', 1, ?, ?)`,
              [row.id, today, r.daysAgo, supplier.id, r.reason, r.increase, r.decrease],
            );
        }
        try {
          await checkCase(em, supplier.id, ids, items, leadTime, today);
        } finally {
          // The rollup rows were written here, not folded from history: gone before any other suite looks.
          const list = ids.join(',');
          await em.execute(
            "delete from analytics_reason_day where item_id = any(string_to_array(?, ',')::uuid[])",
            [list],
          );
          await em.execute("delete from inventory_item where id = any(string_to_array(?, ',')::uuid[])", [
            list,
          ]);
          await em.execute('delete from supplier where id = ?', [supplier.id]);
        }
      }),
      { numRuns: 40 },
    );
  });
});

async function checkCase(
  em: EntityManager,
  supplierId: string,
  ids: string[],
  items: Item[],
  leadTime: number | null,
  today: string,
) {
  const settings = testApp().services.config.replenishment;
  const z = serviceLevelZ(settings.serviceLevel);
  await computeReplenishment(em, settings);
  const page = await pageSuggestions(em, settings, { supplierId }, { page: 0, size: 200, sort: [] }, today);
  const lead = leadTime ?? settings.defaultLeadDays;
  for (const [index, item] of items.entries()) {
    const createdDay = addDays(today, -item.ageDays);
    const w = windowLength(createdDay, today, settings.demandDays);
    const days = Array.from({ length: w }, (_, i) =>
      dayDemand(item.rows.filter(r => r.daysAgo === w - 1 - i)),
    );
    const window = demandWindow(days);
    const levels = computedLevels(window, lead, z, settings.coverDays);
    const pure = suggest(
      window,
      levels,
      {
        quantity: item.quantity,
        onOrderQuantity: item.onOrder,
        minimumQuantity: item.minimum,
        ownReorderPoint: item.levels.rop,
        ownOrderUpToQuantity: item.levels.out,
      },
      lead,
      today,
    );
    const text = fromContractText(item, today, { ...settings, serviceLevelZ: z }, lead);
    const [stored] = await em.execute<Record<string, any>[]>(
      'select * from replenishment_level where item_id = ?',
      [ids[index]],
    );
    // The SQL's stored computation, bit for bit the pure function's.
    expect(stored.window_days).to.equal(w);
    expect(Number(stored.window_demand)).to.equal(window.windowDemand);
    expect(Number(stored.sum_of_squares)).to.equal(window.sumOfSquares);
    expect(stored.demand_std_dev).to.equal(levels.demandStdDev);
    expect(Number(stored.demand_reorder_point)).to.equal(levels.demandReorderPoint);
    expect(Number(stored.cover_quantity)).to.equal(levels.coverQuantity);
    expect(stored.lead_time_days).to.equal(lead);
    // The pure function against the contract's text.
    expect({ w, total: window.windowDemand }).to.deep.equal({
      w: text.windowDays,
      total: text.windowDemand,
    });
    expect(levels.demandStdDev).to.be.closeTo(text.s, 1e-9 * (1 + text.s));
    const { s: _s, windowDays: _w, windowDemand: _t, ...decision } = text;
    expect({
      suggestedQuantity: pure.suggestedQuantity,
      reorderPoint: pure.reorderPoint,
      orderUpToQuantity: pure.orderUpToQuantity,
      daysOfCover: pure.daysOfCover,
      projectedStockoutDate: pure.projectedStockoutDate,
      orderByDate: pure.orderByDate,
    }).to.deep.equal(decision);
    // The suggestions (the SQL with the current item state) against the pure function.
    const row = page.content.find(r => r.itemId === ids[index]);
    if (pure.suggestedQuantity === null) expect(row).to.equal(undefined);
    else
      expect(row).to.deep.include({
        quantity: item.quantity,
        onOrderQuantity: item.onOrder,
        inventoryPosition: pure.inventoryPosition,
        reorderPoint: pure.reorderPoint,
        orderUpToQuantity: pure.orderUpToQuantity,
        suggestedQuantity: pure.suggestedQuantity,
        daysOfCover: pure.daysOfCover,
        projectedStockoutDate: pure.projectedStockoutDate,
        orderByDate: pure.orderByDate,
        leadTimeDays: lead,
        dailyDemand: Number(levels.dailyDemand.toFixed(4)),
        suggestedCost: Number(((pure.suggestedQuantity * 125) / 100).toFixed(2)),
      });
  }
}
