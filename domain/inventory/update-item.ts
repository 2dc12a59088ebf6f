import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { isUuid } from '../shared/sql.js';
import { itemNotFound, staleItem } from './item-errors.js';
import { ITEM_COLUMNS, toItemView, type ItemRow } from './item.view.js';
import { recordStockChanged } from './stock-event.js';
import { recordItemChange } from './item-change.js';
import {
  checkItemClashes,
  joinCaller,
  orderLevelsOf,
  skuOf,
  type ItemInput,
  type StockWriteResult,
} from './create-item.js';
import { toCents } from '../shared/money.js';

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
  if (!isUuid(input.id)) throw itemNotFound();
  return em.transactional(async tx => {
    const current = await tx.execute<
      {
        quantity: number;
        price: string;
        version: number;
        reorderPoint: number | null;
        orderUpToQuantity: number | null;
      }[]
    >(
      `select quantity, price::text as price, version, reorder_point as "reorderPoint",
              order_up_to_quantity as "orderUpToQuantity"
         from inventory_item where id = ? for update`,
      [input.id],
    );
    if (current.length === 0) throw itemNotFound();
    const before = current[0];
    if (input.expectedVersion !== undefined && before.version !== input.expectedVersion) throw staleItem();
    const levels = orderLevelsOf(input, before);
    await checkItemClashes(tx, input, input.id);
    const rows = await tx.execute<ItemRow[]>(
      `update inventory_item i
          set name = ?, sku = ?, quantity = ?, price = ?::numeric, minimum_quantity = ?, supplier_id = ?::uuid,
              reorder_point = ?::integer, order_up_to_quantity = ?::integer, version = i.version + 1,
              updated_at = clock_timestamp()
         from supplier s
        where s.id = ?::uuid and i.id = ?
       returning ${ITEM_COLUMNS}`,
      [
        input.name,
        skuOf(input),
        input.quantity,
        String(input.price),
        input.minimumQuantity,
        input.supplierId,
        levels.reorderPoint,
        levels.orderUpToQuantity,
        input.supplierId,
        input.id,
      ],
    );
    const row = rows[0];
    const at = await recordItemChange(tx, input.id, 'updated');
    const eventIds: string[] = [];
    if (toCents(Number(before.price)) !== toCents(input.price))
      eventIds.push(
        await recordStockChanged(
          tx,
          row,
          { change: 0, quantityBefore: Number(before.quantity), reason: 'PRICE_CHANGE', at },
          context,
        ),
      );
    const change = input.quantity - Number(before.quantity);
    if (change !== 0)
      eventIds.push(
        await recordStockChanged(
          tx,
          row,
          { change, quantityBefore: Number(before.quantity), reason: 'MANUAL_ADJUSTMENT', at },
          context,
        ),
      );
    return { item: toItemView(row), eventIds };
  }, joinCaller());
}
