import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { isUuid } from '../shared/sql.js';
import { itemNotFound, staleItem } from './item-errors.js';
import { ITEM_COLUMNS, toItemView, type ItemRow } from './item.view.js';
import { recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';
import type { StockWriteResult } from './create-item.js';

/** The price change: atomic price update + a PRICE_CHANGE event (change 0, priceAtChange = the new price). */
export async function updatePrice(
  em: EntityManager,
  input: { id: string; price: number; expectedVersion?: number },
  context: WriteContext,
): Promise<StockWriteResult> {
  if (!isUuid(input.id)) throw itemNotFound();
  return em.transactional(async tx => {
    const rows = await tx.execute<ItemRow[]>(
      `update inventory_item i set price = ?::numeric, version = i.version + 1, updated_at = clock_timestamp()
         from supplier s
        where s.id = i.supplier_id and i.id = ? and (?::integer is null or i.version = ?::integer)
       returning ${ITEM_COLUMNS}`,
      [String(input.price), input.id, input.expectedVersion ?? null, input.expectedVersion ?? null],
    );
    if (rows.length === 0) {
      const exists = await tx.execute('select 1 from inventory_item where id = ?', [input.id]);
      throw exists.length === 0 ? itemNotFound() : staleItem();
    }
    const row = rows[0];
    const at = await recordItemChange(tx, input.id, 'updated');
    const eventId = await recordStockChanged(
      tx,
      row,
      { change: 0, quantityBefore: Number(row.quantity), reason: 'PRICE_CHANGE', at },
      context,
    );
    return { item: toItemView(row), eventIds: [eventId] };
  });
}
