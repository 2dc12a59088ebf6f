import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { recordEvent } from '../outbox/record-event.js';
import { productColumns, toProductView, type ProductRow, type ProductView } from './product.view.js';
import { PRODUCT_QUANTITY_CHANGED, quantityChanged } from './product-events.js';

/**
 * Sets a product's quantity in one guarded statement: the row is locked by the sub-select, so the returned
 * `quantity_before` is the value this update replaced (no lost update), and the change and its outbox event
 * commit together. The CHECK constraint keeps the quantity >= 0 whatever the input.
 */
export async function updateProductQuantity(
  em: EntityManager,
  id: string,
  quantity: number,
  actor: string,
): Promise<ProductView> {
  return em.transactional(async tem => {
    const rows = await tem.execute<(ProductRow & { quantity_before: number })[]>(
      `update product p set quantity = ?, updated_at = now()
       from (select id, quantity from product where id = ? for update) old
       where p.id = old.id
       returning old.quantity as quantity_before, ${productColumns('p')}`,
      [quantity, id],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError('product.not.found');
    const view = toProductView(row);
    if (row.quantity_before !== view.quantity)
      await recordEvent(
        tem,
        PRODUCT_QUANTITY_CHANGED,
        row.id,
        quantityChanged(view, row.quantity_before, view.quantity, actor, view.updatedAt),
      );
    return view;
  });
}
