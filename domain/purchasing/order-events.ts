import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../outbox/record-event.js';
import type { PurchaseOrderView } from './purchase-order.view.js';

export const ORDER_EVENT_TYPES = [
  'purchase_order.ordered',
  'purchase_order.received',
  'purchase_order.cancelled',
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/**
 * The outbox row of an order event, written in the transaction of the change it announces (so it exists exactly
 * when the change does, once). Its payload is the webhook body without `eventId` (the outbox id, added by the
 * low-stock consumer when it turns the event into a signed webhook delivery, evaluate-low-stock.ts):
 * `{type, occurredAt, order}`. Returns the event id to publish after commit.
 */
export async function recordOrderEvent(
  tx: EntityManager,
  type: OrderEventType,
  order: PurchaseOrderView,
): Promise<string> {
  return recordEvent(tx, type, order.id, { type, occurredAt: new Date().toISOString(), order });
}
