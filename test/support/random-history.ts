import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createItem, createSupplier, recordStockChange } from './stock-events.js';

export const INBOUND = ['RESTOCK', 'RETURN', 'INITIAL_STOCK', 'INVENTORY_COUNT', 'MANUAL_ADJUSTMENT'];
export const OUTBOUND = [
  'SALE',
  'DAMAGED',
  'EXPIRED',
  'LOST',
  'SCRAPPED',
  'DESTROYED',
  'RETURNED_TO_SUPPLIER',
  'MANUAL_ADJUSTMENT',
  'INVENTORY_COUNT',
];
export const DELETION = ['SCRAPPED', 'DESTROYED', 'DAMAGED', 'EXPIRED', 'LOST', 'RETURNED_TO_SUPPLIER'];
export const USERS = ['alice@example.test', 'bob@example.test', 'carol'];

const op = fc.record({
  item: fc.nat({ max: 9 }),
  gapMinutes: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 600, max: 60 * 24 * 40 })),
  kind: fc.constantFrom('adjust', 'adjust', 'adjust', 'price', 'move', 'delete', 'receipt'),
  delta: fc.integer({ min: -25, max: 30 }).filter(d => d !== 0),
  reason: fc.nat({ max: 99 }),
  price: fc.option(fc.integer({ min: 1, max: 250000 }), { freq: 3 }),
  user: fc.nat({ max: USERS.length - 1 }),
});

/**
 * A random history over a few suppliers and items: adjustments, price changes, supplier moves, deletions and
 * receipts (RESTOCK at a unit cost of their own, mostly not the item's price).
 */
export const historyArb = fc.record({
  start: fc.integer({ min: Date.parse('2025-01-01T00:00:00Z'), max: Date.parse('2027-06-01T00:00:00Z') }),
  suppliers: fc.integer({ min: 1, max: 2 }),
  items: fc.array(
    fc.record({
      price: fc.integer({ min: 1, max: 100000 }),
      minimum: fc.nat({ max: 12 }),
      supplier: fc.nat({ max: 1 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  ops: fc.array(op, { minLength: 1, maxLength: 25 }),
});
export type History = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

const money = (cents: number) => (cents / 100).toFixed(2);

export interface Built {
  supplierIds: string[];
  itemIds: string[];
  eventIds: string[];
  firstDay: string;
  lastDay: string;
}

/** Writes the history through the test factory (the write path's shape) with increasing timestamps. */
export async function buildHistory(em: EntityManager, h: History, withHistory = () => true): Promise<Built> {
  const supplierIds: string[] = [];
  for (let i = 0; i < h.suppliers; i++) supplierIds.push((await createSupplier(em)).id);
  const items: { id: string; q: number; supplier: number; gone: boolean }[] = [];
  for (const it of h.items) {
    const supplier = it.supplier % supplierIds.length;
    const { id } = await createItem(em, {
      supplierId: supplierIds[supplier],
      price: money(it.price),
      minimumQuantity: it.minimum,
    });
    items.push({ id, q: 0, supplier, gone: false });
  }
  let t = h.start;
  const eventIds: string[] = [];
  for (const o of h.ops) {
    const item = items[o.item % items.length];
    if (item.gone) continue;
    t += o.gapMinutes * 60000 + 1;
    const base = { itemId: item.id, at: new Date(t), createdBy: USERS[o.user], withHistory: withHistory() };
    if (o.kind === 'price') {
      eventIds.push(
        await recordStockChange(em, {
          ...base,
          change: 0,
          reason: 'PRICE_CHANGE',
          price: money(o.price ?? 199),
        }),
      );
    } else if (o.kind === 'receipt') {
      const quantity = Math.abs(o.delta);
      eventIds.push(
        await recordStockChange(em, {
          ...base,
          change: quantity,
          reason: 'RESTOCK',
          receipt: { unitCost: money(o.price ?? 1 + o.reason * 37), purchaseOrderId: randomUUID() },
        }),
      );
      item.q += quantity;
    } else if (o.kind === 'delete') {
      if (item.q !== 0) continue;
      eventIds.push(
        await recordStockChange(em, {
          ...base,
          change: 0,
          reason: DELETION[o.reason % DELETION.length],
          delete: true,
        }),
      );
      item.gone = true;
    } else {
      const delta = o.delta < 0 ? Math.max(o.delta, -item.q) : o.delta;
      if (delta === 0) continue;
      const reasons = delta > 0 ? INBOUND : OUTBOUND;
      const move = o.kind === 'move' && supplierIds.length > 1;
      if (move) item.supplier = (item.supplier + 1) % supplierIds.length;
      eventIds.push(
        await recordStockChange(em, {
          ...base,
          change: delta,
          reason: reasons[o.reason % reasons.length],
          ...(o.price === null ? {} : { price: money(o.price) }),
          ...(move ? { supplierId: supplierIds[item.supplier] } : {}),
        }),
      );
      item.q += delta;
    }
  }
  return {
    supplierIds,
    itemIds: items.map(i => i.id),
    eventIds,
    firstDay: new Date(h.start).toISOString().slice(0, 10),
    lastDay: new Date(t).toISOString().slice(0, 10),
  };
}
