import type { EntityManager } from '@mikro-orm/postgresql';
import { STOCK_CHANGED, type StockChangedPayload } from '../outbox/events.js';
import { markDone, markEventsDone, pendingEvent, pendingItemEvents } from '../outbox/pending-events.js';
import { lockAlertsItem, lockRebuildShared } from '../analytics/locks.js';

export const LOW_STOCK_OPENED = 'low_stock.opened';

const isLow = (p: StockChangedPayload) =>
  !p.deleted && p.minimumQuantity > 0 && p.quantityAfter < p.minimumQuantity;

/**
 * The low-stock consumer, edge-triggered: an alert opens when an item goes below its minimum (one open alert
 * per item, a partial unique index guarantees it) and closes when it is back at or above it (or deleted).
 * An item's pending events are applied in id order; `alerts_done_at` is set in the same transaction. Each
 * opening creates a pending webhook delivery when a webhook URL is configured; returns their ids so the
 * caller can enqueue them after the commit.
 */
export async function evaluateLowStock(
  em: EntityManager,
  eventId: string,
  webhookUrl: string | undefined,
): Promise<string[]> {
  return em.transactional(async tx => {
    await lockRebuildShared(tx);
    const event = await pendingEvent(tx, 'alerts', eventId);
    if (!event) return [];
    if (event.type !== STOCK_CHANGED) {
      await markDone(tx, 'alerts', eventId);
      return [];
    }
    await lockAlertsItem(tx, event.aggregateId);
    const deliveries: string[] = [];
    const events = await pendingItemEvents(tx, 'alerts', event.aggregateId, eventId);
    for (const { id, payload: p } of events) {
      const open = await tx.execute<{ id: string }[]>(
        'select id from low_stock_alert where item_id = ? and closed_at is null',
        [p.itemId],
      );
      if (isLow(p) && open.length === 0) {
        const [alert] = await tx.execute<{ id: string }[]>(
          `insert into low_stock_alert (item_id, item_name, supplier_id, quantity, minimum_quantity, raised_at,
             open_event_id) values (?, ?, ?, ?, ?, ?, ?) returning id`,
          [p.itemId, p.itemName, p.supplierId, p.quantityAfter, p.minimumQuantity, p.occurredAt, id],
        );
        if (webhookUrl) {
          const body = {
            type: LOW_STOCK_OPENED,
            alertId: String(alert.id),
            itemId: p.itemId,
            itemName: p.itemName,
            supplierId: p.supplierId,
            supplierName: p.supplierName,
            quantity: p.quantityAfter,
            minimumQuantity: p.minimumQuantity,
            raisedAt: new Date(p.occurredAt).toISOString(),
            eventId: id,
          };
          const [delivery] = await tx.execute<{ id: string }[]>(
            `insert into webhook_delivery (alert_id, event_type, url, payload) values (?, ?, ?, ?::jsonb) returning id`,
            [alert.id, LOW_STOCK_OPENED, webhookUrl, JSON.stringify(body)],
          );
          deliveries.push(String(delivery.id));
        }
      } else if (isLow(p)) {
        await tx.execute(
          'update low_stock_alert set quantity = ?, minimum_quantity = ?, item_name = ? where id = ?',
          [p.quantityAfter, p.minimumQuantity, p.itemName, open[0].id],
        );
      } else if (open.length > 0) {
        await tx.execute(
          'update low_stock_alert set closed_at = ?, close_event_id = ?, quantity = ? where id = ?',
          [p.occurredAt, id, p.quantityAfter, open[0].id],
        );
      }
    }
    if (events.length > 0)
      await markEventsDone(
        tx,
        'alerts',
        events.map(e => e.id),
      );
    return deliveries;
  });
}
