import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PurchaseOrderView } from './purchase-order.view.js';

export type OrderEventType =
  'purchase_order.ordered' | 'purchase_order.received' | 'purchase_order.cancelled';

/**
 * The webhook of an order event, written in the transaction of the change it announces (so it exists exactly
 * when the change does, once): a pending `webhook_delivery` row, delivered, signed and retried like the
 * low-stock ones. Body: `{type, eventId, occurredAt, order}`. No URL configured: nothing. Returns the
 * delivery ids to enqueue after commit.
 */
export async function recordOrderEvent(
  tx: EntityManager,
  type: OrderEventType,
  order: PurchaseOrderView,
  webhookUrl: string | undefined,
): Promise<string[]> {
  if (!webhookUrl) return [];
  const body = { type, eventId: randomUUID(), occurredAt: new Date().toISOString(), order };
  const rows = await tx.execute<{ id: string }[]>(
    'insert into webhook_delivery (event_type, url, payload) values (?, ?, ?::jsonb) returning id::text as id',
    [type, webhookUrl, JSON.stringify(body)],
  );
  return rows.map(row => row.id);
}
