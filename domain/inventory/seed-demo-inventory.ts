import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
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

/** Demo items: supplier index, unit price in cents, minimum quantity and the stock they start with. */
const ITEMS = [
  { name: 'Steel Bolts M8', sku: 'BOLT-M8', supplier: 0, priceCents: 35, minimum: 200, start: 1000 },
  { name: 'Hex Nuts M8', sku: 'NUT-M8', supplier: 0, priceCents: 12, minimum: 300, start: 1500 },
  { name: 'Cordless Drill', sku: 'DRILL-18V', supplier: 1, priceCents: 8999, minimum: 5, start: 25 },
  { name: 'Safety Gloves', sku: 'GLOVE-L', supplier: 1, priceCents: 450, minimum: 40, start: 120 },
  { name: 'Measuring Tape 5m', sku: 'TAPE-5M', supplier: 1, priceCents: 799, minimum: 10, start: 60 },
  { name: 'Copper Wire 10m', sku: 'WIRE-CU10', supplier: 2, priceCents: 1250, minimum: 20, start: 80 },
  { name: 'Circuit Breaker 16A', sku: 'CB-16A', supplier: 2, priceCents: 1575, minimum: 15, start: 40 },
  { name: 'LED Panel 60x60', sku: 'LED-6060', supplier: 2, priceCents: 4200, minimum: 8, start: 30 },
] as const;

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

/** Three months of plausible history for one item: initial stock, weekly sales, restocks, a write-off, a price change. */
function storyOf(
  item: (typeof ITEMS)[number],
  index: number,
): { events: DemoEvent[]; quantity: number; priceCents: number } {
  const next = random(index + 7);
  let quantity = item.start;
  let priceCents: number = item.priceCents;
  const events: DemoEvent[] = [
    { reason: 'INITIAL_STOCK', change: item.start, priceCents, day: HISTORY_DAYS },
  ];
  for (let day = HISTORY_DAYS - 3; day > 0; day -= 3 + Math.floor(next() * 4)) {
    const roll = next();
    if (roll < 0.6 && quantity > 0) {
      const sold = Math.max(1, Math.min(quantity, Math.round(item.start * (0.05 + next() * 0.1))));
      events.push({ reason: 'SALE', change: -sold, priceCents, day });
      quantity -= sold;
    } else if (roll < 0.8 || quantity < item.minimum) {
      const restock = Math.round(item.start * (0.2 + next() * 0.3));
      events.push({ reason: 'RESTOCK', change: restock, priceCents, day });
      quantity += restock;
    } else if (roll < 0.88 && quantity > 0) {
      events.push({ reason: 'DAMAGED', change: -1, priceCents, day });
      quantity -= 1;
    } else if (roll < 0.93) {
      priceCents = Math.max(1, Math.round(priceCents * (1 + (next() - 0.4) / 10)));
      events.push({ reason: 'PRICE_CHANGE', change: 0, priceCents, day });
    } else if (quantity > 0) {
      events.push({ reason: 'RETURN', change: 1, priceCents, day });
      quantity += 1;
    }
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
      const itemId = rows[0].id;
      let quantity = 0;
      for (const [position, event] of story.events.entries()) {
        const payload: StockChangedPayload = {
          itemId,
          itemName: item.name,
          supplierId,
          supplierName: SUPPLIERS[item.supplier].name,
          change: event.change,
          quantityBefore: quantity,
          quantityAfter: quantity + event.change,
          minimumQuantity: item.minimum,
          reason: event.reason,
          priceAtChange: centsToNumber(event.priceCents).toFixed(2),
          createdBy: DEMO_USER,
          occurredAt: daysAgo(event.day, index * 10 + (position % 10)).toISOString(),
          correlationId: null,
        };
        quantity += event.change;
        await tx.execute('insert into outbox_event (type, aggregate_id, payload) values (?, ?, ?::jsonb)', [
          STOCK_CHANGED,
          itemId,
          JSON.stringify(payload),
        ]);
      }
      created += 1 + story.events.length;
    }
    return created;
  });
}
