import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { ConflictError, ValidationError } from '../shared/errors.js';
import { isDeletionReason } from './reasons.js';
import { eventItemOf, recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';
import { lockItem } from './lock-item.js';

/**
 * Item deletion: 404 -> 412 (If-Match) -> 409 while open orders still bring some -> 409 while stock remains -> 400 invalid deletion reason -> history event
 * (change 0, the deletion reason) and the `deleted` item change -> row removed, all in one transaction with the row
 * locked.
 */
export async function deleteItem(
  em: EntityManager,
  input: { id: string; reason?: string; expectedVersion?: number },
  context: WriteContext,
): Promise<{ eventIds: string[] }> {
  return em.transactional(async tx => {
    const item = await lockItem(tx, input.id, input.expectedVersion);
    // onOrderQuantity is the open quantity of ORDERED/PARTIALLY_RECEIVED orders, changed under this row lock.
    if (item.onOrderQuantity > 0) throw new ConflictError('inventory.item.delete.on.order');
    if (item.quantity > 0) throw new ConflictError('inventory.item.delete.stock.remaining');
    if (!isDeletionReason(input.reason)) throw new ValidationError('inventory.item.delete.reason.invalid');
    const at = await recordItemChange(tx, item.id, 'deleted');
    const eventId = await recordStockChanged(
      tx,
      eventItemOf(item),
      { change: 0, quantityBefore: 0, reason: input.reason!, deleted: true, at },
      context,
    );
    tx.remove(item);
    await tx.flush();
    return { eventIds: [eventId] };
  });
}
