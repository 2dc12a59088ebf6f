import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { numericToCents, toCents } from '../shared/money.js';
import { itemViewOf } from './item.view.js';
import { eventItemOf, recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';
import { bumpVersion, lockItem } from './lock-item.js';
import {
  checkItemClashes,
  itemFields,
  joinCaller,
  orderLevelsOf,
  type ItemInput,
  type StockWriteResult,
} from './create-item.js';

/**
 * The item update (PUT) (full replace): 404 -> 412 (If-Match) -> 400 own levels (orderUpToQuantity > reorderPoint, against the stored
 * value of the one not sent) -> 409 duplicate name/sku -> 404 supplier -> update. The row is
 * locked for the transaction, so the quantity delta recorded is exact. A quantity change writes a
 * MANUAL_ADJUSTMENT event, a price change a PRICE_CHANGE event (price first, so the adjustment carries the
 * new unit price).
 */
export async function updateItem(
  em: EntityManager,
  input: ItemInput & { id: string; expectedVersion?: number },
  context: WriteContext,
): Promise<StockWriteResult> {
  return em.transactional(async tx => {
    const item = await lockItem(tx, input.id, input.expectedVersion);
    const levels = orderLevelsOf(input, {
      reorderPoint: item.reorderPoint ?? null,
      orderUpToQuantity: item.orderUpToQuantity ?? null,
    });
    const supplier = await checkItemClashes(tx, input, input.id);
    const before = { quantity: item.quantity, priceCents: numericToCents(item.price) };
    tx.assign(item, itemFields(input, supplier, levels));
    bumpVersion(item);
    await tx.flush();
    const at = await recordItemChange(tx, item.id, 'updated');
    const eventIds: string[] = [];
    if (before.priceCents !== toCents(input.price))
      eventIds.push(
        await recordStockChanged(
          tx,
          eventItemOf(item),
          { change: 0, quantityBefore: before.quantity, reason: 'PRICE_CHANGE', at },
          context,
        ),
      );
    const change = input.quantity - before.quantity;
    if (change !== 0)
      eventIds.push(
        await recordStockChanged(
          tx,
          eventItemOf(item),
          { change, quantityBefore: before.quantity, reason: 'MANUAL_ADJUSTMENT', at },
          context,
        ),
      );
    return { item: itemViewOf(item), eventIds };
  }, joinCaller());
}
