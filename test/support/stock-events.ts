import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../config/services.js';
import { recordEvent } from '../../domain/outbox/record-event.js';
import { STOCK_CHANGED, type StockChangedPayload } from '../../domain/outbox/events.js';
import { publishEvents } from '../../domain/outbox/publish-events.js';
import {
  ALERTS_CONSUMER,
  ANALYTICS_CONSUMER,
  STOCK_HISTORY_CONSUMER,
} from '../../domain/outbox/consumers.js';
import { waitFor } from './wait-for.js';
import { markDoneSql, pendingForSql } from '../../domain/outbox/pending-events.js';

/**
 * Test factory that mirrors the inventory write path (issue 4): a guarded change of the item row plus a
 * `stock.changed` outbox row in one transaction, and (like the stock-history worker) the history entry with
 * the history marker set. Suppliers and items are plain rows.
 */
export async function createSupplier(em: EntityManager, name = `Supplier ${randomUUID().slice(0, 8)}`) {
  const [row] = await em.execute<{ id: string }[]>(
    'insert into supplier (name, created_by) values (?, ?) returning id',
    [name, 'factory'],
  );
  return { id: row.id, name };
}

export async function createItem(
  em: EntityManager,
  item: { supplierId: string; name?: string; price?: string; minimumQuantity?: number },
) {
  const name = item.name ?? `Item ${randomUUID().slice(0, 8)}`;
  const [row] = await em.execute<{ id: string }[]>(
    `insert into inventory_item (name, quantity, price, minimum_quantity, supplier_id, created_by)
     values (?, 0, ?, ?, ?, 'factory') returning id`,
    [name, item.price ?? '1.00', item.minimumQuantity ?? 0, item.supplierId],
  );
  return { id: row.id, name };
}

export interface StockChange {
  itemId: string;
  change: number;
  reason: string;
  /** A new unit price (2-decimal string) applied with the change (PRICE_CHANGE: change 0). */
  price?: string;
  /** Move the item to another supplier with this change (a PUT would). */
  supplierId?: string;
  /** A receipt's entry (RESTOCK): its line's unit cost (2-decimal string) and its order. */
  receipt?: { unitCost: string; purchaseOrderId: string };
  /** Deletion (change 0, quantity must be 0): the item row is removed. */
  delete?: boolean;
  createdBy?: string;
  at: Date;
  /** false: the history worker has not run yet (no entry, the history marker not set). */
  withHistory?: boolean;
}

/** Applies one change like the write path would and returns the outbox event id. */
export async function recordStockChange(em: EntityManager, c: StockChange): Promise<string> {
  return em.transactional(async tx => {
    if (c.price || c.supplierId)
      await tx.execute(
        'update inventory_item set price = coalesce(?::numeric, price), supplier_id = coalesce(?::uuid, supplier_id) where id = ?',
        [c.price ?? null, c.supplierId ?? null, c.itemId],
      );
    const rows = await tx.execute<any[]>(
      `update inventory_item i set quantity = quantity + ?, version = version + 1
       from supplier s where i.id = ? and s.id = i.supplier_id and i.quantity + ? >= 0
       returning i.name, i.quantity, i.price::text as price, i.minimum_quantity, s.id as supplier_id, s.name as supplier_name`,
      [c.change, c.itemId, c.change],
    );
    if (rows.length === 0) throw new Error(`change ${c.change} not applicable to ${c.itemId}`);
    const r = rows[0];
    const payload: StockChangedPayload = {
      itemId: c.itemId,
      itemName: r.name,
      supplierId: r.supplier_id,
      supplierName: r.supplier_name,
      change: c.change,
      quantityBefore: r.quantity - c.change,
      quantityAfter: r.quantity,
      minimumQuantity: r.minimum_quantity,
      reason: c.reason,
      priceAtChange: r.price,
      ...(c.delete ? { deleted: true } : {}),
      ...(c.receipt ?? {}),
      createdBy: c.createdBy ?? 'factory',
      occurredAt: c.at.toISOString(),
      correlationId: null,
    };
    const eventId = await recordEvent(tx, STOCK_CHANGED, c.itemId, payload);
    if (c.delete) await tx.execute('delete from inventory_item where id = ?', [c.itemId]);
    if (c.withHistory !== false) {
      await tx.execute(
        `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
           quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp", unit_cost,
           purchase_order_id)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::numeric, ?, ?, ?::numeric, ?::uuid)`,
        [
          eventId,
          c.itemId,
          payload.itemName,
          payload.supplierId,
          payload.supplierName,
          c.change,
          payload.quantityBefore,
          payload.quantityAfter,
          c.reason,
          payload.priceAtChange,
          payload.createdBy,
          payload.occurredAt,
          c.receipt?.unitCost ?? null,
          c.receipt?.purchaseOrderId ?? null,
        ],
      );
      await tx.execute(
        markDoneSql(STOCK_HISTORY_CONSUMER, 'select id, part from outbox_event where id = ?'),
        [eventId],
      );
    }
    return eventId;
  });
}

/** Writes the history entries the stock-history worker would write for events still without one. */
export async function completeHistory(em: EntityManager): Promise<void> {
  await em.transactional(async tx => {
    await tx.execute(`
      insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
        quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp", unit_cost,
        purchase_order_id)
      select id, (payload->>'itemId')::uuid, payload->>'itemName', (payload->>'supplierId')::uuid,
        payload->>'supplierName', (payload->>'change')::int, (payload->>'quantityBefore')::int,
        (payload->>'quantityAfter')::int, payload->>'reason', (payload->>'priceAtChange')::numeric,
        payload->>'createdBy', (payload->>'occurredAt')::timestamptz, (payload->>'unitCost')::numeric,
        (payload->>'purchaseOrderId')::uuid
      from outbox_event o where type = 'stock.changed' and ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}
      on conflict (outbox_event_id) do nothing`);
    await tx.execute(
      markDoneSql(
        STOCK_HISTORY_CONSUMER,
        `select id, part from outbox_event o where ${pendingForSql([STOCK_HISTORY_CONSUMER], 'o')}`,
      ),
    );
  });
}

/**
 * Wakes the analytics and low-stock consumers for every pending event (the write path's after-commit
 * enqueue) and waits until none is pending.
 */
export async function settleConsumers(services: Services, timeoutMs = 20000): Promise<void> {
  const em = services.orm.em.fork();
  const pending = await em.execute<{ id: string }[]>(
    `select id from outbox_event o where ${pendingForSql([ANALYTICS_CONSUMER, ALERTS_CONSUMER], 'o')} order by id`,
  );
  for (const { id } of pending)
    await publishEvents(services.queues, [String(id)], [ANALYTICS_CONSUMER, ALERTS_CONSUMER]);
  await waitFor(
    async () => {
      const [row] = await em.execute<{ n: string }[]>(
        `select count(*) as n from outbox_event o where ${pendingForSql([ANALYTICS_CONSUMER, ALERTS_CONSUMER], 'o')}`,
      );
      return Number(row.n) === 0;
    },
    timeoutMs,
    'the analytics and low-stock consumers',
  );
}
