import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { moneyText } from '../shared/money.js';
import { itemViewOf } from './item.view.js';
import { eventItemOf, recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';
import { bumpVersion, lockItem } from './lock-item.js';
import type { StockWriteResult } from './create-item.js';

/** The price change: 404 -> 412 -> the price set + a PRICE_CHANGE event (change 0, priceAtChange = the new price). */
export async function updatePrice(
  em: EntityManager,
  input: { id: string; price: number; expectedVersion?: number },
  context: WriteContext,
): Promise<StockWriteResult> {
  return em.transactional(async tx => {
    const item = await lockItem(tx, input.id, input.expectedVersion);
    item.price = moneyText(input.price);
    bumpVersion(item);
    await tx.flush();
    const at = await recordItemChange(tx, item.id, 'updated');
    const eventId = await recordStockChanged(
      tx,
      eventItemOf(item),
      { change: 0, quantityBefore: item.quantity, reason: 'PRICE_CHANGE', at },
      context,
    );
    return { item: itemViewOf(item), eventIds: [eventId] };
  });
}
