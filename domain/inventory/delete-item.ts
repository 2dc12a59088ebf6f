import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { ConflictError, ValidationError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';
import { isDeletionReason } from './reasons.js';
import { itemNotFound, staleItem } from './item-errors.js';
import { ITEM_COLUMNS, ITEM_FROM, type ItemRow } from './item.view.js';
import { recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';

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
  if (!isUuid(input.id)) throw itemNotFound();
  return em.transactional(async tx => {
    const rows = await tx.execute<ItemRow[]>(
      `select ${ITEM_COLUMNS} from ${ITEM_FROM} where i.id = ? for update of i`,
      [input.id],
    );
    if (rows.length === 0) throw itemNotFound();
    const row = rows[0];
    if (input.expectedVersion !== undefined && Number(row.version) !== input.expectedVersion)
      throw staleItem();
    // onOrderQuantity is the open quantity of ORDERED/PARTIALLY_RECEIVED orders, changed under this row lock.
    if (Number(row.on_order_quantity) > 0) throw new ConflictError('inventory.item.delete.on.order');
    if (Number(row.quantity) > 0) throw new ConflictError('inventory.item.delete.stock.remaining');
    if (!isDeletionReason(input.reason)) throw new ValidationError('inventory.item.delete.reason.invalid');
    const at = await recordItemChange(tx, input.id, 'deleted');
    const eventId = await recordStockChanged(
      tx,
      row,
      { change: 0, quantityBefore: 0, reason: input.reason!, deleted: true, at },
      context,
    );
    await tx.execute('delete from inventory_item where id = ?', [input.id]);
    return { eventIds: [eventId] };
  });
}
