import type { EntityManager } from '@mikro-orm/postgresql';
import { recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';
import { centsToNumber } from '../shared/money.js';

const DEMO_USER = 'admin';
const HISTORY_DAYS = 90;

const SUPPLIERS = [
  { name: 'Acme Supplies', contactName: 'Ada Acme', phone: '+49 30 1234567', email: 'orders@acme.example' },
  {
    name: 'Globex Trading',
    contactName: 'Gus Globex',
    phone: '+44 20 7946 0958',
    email: 'sales@globex.example',
  },
  {
    name: 'Initech Parts',
    contactName: 'Ina Initech',
    phone: '+1 512 555 0100',
    email: 'parts@initech.example',
  },
] as const;

/**
 * Demo items: supplier index, unit price in cents, minimum quantity and the stock they start with. `prices`
 * are price changes (new price in cents, days ago) so the price-trend chart moves; `endsLow` items are sold
 * below their minimum at the end, so the low-stock count, lists and alerts have something to show.
 */
const ITEMS: readonly DemoItem[] = [
  {
    name: 'Steel Bolts M8',
    sku: 'BOLT-M8',
    supplier: 0,
    priceCents: 35,
    minimum: 200,
    start: 1000,
    prices: [
      [38, 60],
      [41, 25],
    ],
  },
  {
    name: 'Hex Nuts M8',
    sku: 'NUT-M8',
    supplier: 0,
    priceCents: 12,
    minimum: 300,
    start: 1500,
    endsLow: true,
  },
  {
    name: 'Cordless Drill',
    sku: 'DRILL-18V',
    supplier: 1,
    priceCents: 8999,
    minimum: 5,
    start: 25,
    prices: [
      [7999, 45],
      [8499, 10],
    ],
    endsLow: true,
  },
  { name: 'Safety Gloves', sku: 'GLOVE-L', supplier: 1, priceCents: 450, minimum: 40, start: 120 },
  { name: 'Measuring Tape 5m', sku: 'TAPE-5M', supplier: 1, priceCents: 799, minimum: 10, start: 60 },
  {
    name: 'Copper Wire 10m',
    sku: 'WIRE-CU10',
    supplier: 2,
    priceCents: 1250,
    minimum: 20,
    start: 80,
    prices: [
      [1390, 70],
      [1475, 35],
      [1420, 5],
    ],
  },
  {
    name: 'Circuit Breaker 16A',
    sku: 'CB-16A',
    supplier: 2,
    priceCents: 1575,
    minimum: 15,
    start: 40,
    endsLow: true,
  },
  {
    name: 'LED Panel 60x60',
    sku: 'LED-6060',
    supplier: 2,
    priceCents: 4200,
    minimum: 8,
    start: 30,
    prices: [[3950, 50]],
  },
];

interface DemoItem {
  name: string;
  sku: string;
  supplier: number;
  priceCents: number;
  minimum: number;
  start: number;
  /** [new price in cents, days ago], oldest first. */
  prices?: readonly (readonly [number, number])[];
  endsLow?: boolean;
}

interface DemoEvent {
  reason: string;
  change: number;
  priceCents: number;
  day: number;
}

/** A small deterministic generator, so the demo story is the same on every machine. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/**
 * Three months of plausible history for one item: initial stock, sales, restocks, write-offs and returns, the
 * item's price changes, and for `endsLow` items a last sale that leaves them below their minimum.
 */
function storyOf(
  item: DemoItem,
  index: number,
): { events: DemoEvent[]; quantity: number; priceCents: number } {
  const next = random(index + 7);
  let quantity = item.start;
  let priceCents = item.priceCents;
  const prices = [...(item.prices ?? [])];
  const events: DemoEvent[] = [
    { reason: 'INITIAL_STOCK', change: item.start, priceCents, day: HISTORY_DAYS },
  ];
  for (let day = HISTORY_DAYS - 3; day > 1; day -= 3 + Math.floor(next() * 4)) {
    while (prices.length > 0 && prices[0][1] >= day) {
      const [newPrice, priceDay] = prices.shift()!;
      priceCents = newPrice;
      events.push({ reason: 'PRICE_CHANGE', change: 0, priceCents, day: priceDay });
    }
    const roll = next();
    if (roll < 0.6 && quantity > 0) {
      const sold = Math.max(1, Math.min(quantity, Math.round(item.start * (0.05 + next() * 0.1))));
      events.push({ reason: 'SALE', change: -sold, priceCents, day });
      quantity -= sold;
    } else if (roll < 0.8 || quantity < item.minimum) {
      const restock = Math.round(item.start * (0.2 + next() * 0.3));
      events.push({ reason: 'RESTOCK', change: restock, priceCents, day });
      quantity += restock;
    } else if (roll < 0.9 && quantity > 0) {
      events.push({ reason: 'DAMAGED', change: -1, priceCents, day });
      quantity -= 1;
    } else if (quantity > 0) {
      events.push({ reason: 'RETURN', change: 1, priceCents, day });
      quantity += 1;
    }
  }
  for (const [newPrice, priceDay] of prices) {
    priceCents = newPrice;
    events.push({ reason: 'PRICE_CHANGE', change: 0, priceCents, day: priceDay });
  }
  const low = Math.floor(item.minimum / 2);
  if (item.endsLow && quantity > low) {
    events.push({ reason: 'SALE', change: low - quantity, priceCents, day: 1 });
    quantity = low;
  }
  return { events, quantity, priceCents };
}

const daysAgo = (days: number, minuteOfDay: number) =>
  new Date(
    Date.UTC(
      new Date().getUTCFullYear(),
      new Date().getUTCMonth(),
      new Date().getUTCDate() - days,
      8,
      minuteOfDay,
    ),
  );

/**
 * Demo suppliers, inventory items and three months of stock history. The history is written as `stock.changed`
 * outbox events with past times, exactly as the write path records changes, so the workers build the history
 * entries, alerts and analytics rollups from them. Idempotent: does nothing when the demo suppliers exist.
 * Returns how many records it created.
 */
export async function seedDemoInventory(em: EntityManager): Promise<number> {
  return em.transactional(async tx => {
    const existing = await tx.execute<{ n: string }[]>(
      'select count(*) as n from supplier where lower(name) = lower(?)',
      [SUPPLIERS[0].name],
    );
    if (Number(existing[0].n) > 0) return 0;
    const supplierIds: string[] = [];
    for (const supplier of SUPPLIERS) {
      const rows = await tx.execute<{ id: string }[]>(
        `insert into supplier (name, contact_name, phone, email, created_by, created_at)
         values (?, ?, ?, ?, ?, ?) returning id`,
        [
          supplier.name,
          supplier.contactName,
          supplier.phone,
          supplier.email,
          DEMO_USER,
          daysAgo(HISTORY_DAYS + 1, 0),
        ],
      );
      supplierIds.push(rows[0].id);
    }
    let created = SUPPLIERS.length;
    for (const [index, item] of ITEMS.entries()) {
      const story = storyOf(item, index);
      const supplierId = supplierIds[item.supplier];
      const rows = await tx.execute<{ id: string }[]>(
        `insert into inventory_item (name, sku, quantity, price, minimum_quantity, supplier_id, created_by, created_at, version)
         values (?, ?, ?, ?::numeric, ?, ?::uuid, ?, ?, ?) returning id`,
        [
          item.name,
          item.sku,
          story.quantity,
          centsToNumber(story.priceCents).toFixed(2),
          item.minimum,
          supplierId,
          DEMO_USER,
          daysAgo(HISTORY_DAYS, 0),
          story.events.length,
        ],
      );
      await recordItemChange(tx, rows[0].id, 'created');
      const demoItem = {
        id: rows[0].id,
        name: item.name,
        supplier_id: supplierId,
        supplier_name: SUPPLIERS[item.supplier].name,
        minimum_quantity: item.minimum,
      };
      let quantity = 0;
      // The same event path as the API's writes (price update included): the consumers build the history
      // entries, alerts and rollups from these events.
      for (const [position, event] of story.events.entries()) {
        await recordStockChanged(
          tx,
          { ...demoItem, price: centsToNumber(event.priceCents).toFixed(2) },
          {
            change: event.change,
            quantityBefore: quantity,
            reason: event.reason,
            at: daysAgo(event.day, index * 40 + position),
          },
          { user: DEMO_USER, correlationId: null },
        );
        quantity += event.change;
      }
      created += 1 + story.events.length;
    }
    return created;
  });
}
