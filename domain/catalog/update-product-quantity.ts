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
    // Lock first: the value read here is the one this update replaces; concurrent writers queue on the lock.
    const locked = await tem.execute<{ quantity: number }[]>(
      'select quantity from product where id = ? for update',
      [id],
    );
    if (!locked[0]) throw new NotFoundError('product.not.found');
    const before = locked[0].quantity;
    const rows = await tem.execute<ProductRow[]>(
      `update product p set quantity = ?, updated_at = now() where p.id = ? returning ${productColumns('p')}`,
      [quantity, id],
    );
    const row = rows[0];
    const view = toProductView(row);
    if (before !== view.quantity)
      await recordEvent(
        tem,
        PRODUCT_QUANTITY_CHANGED,
        row.id,
        quantityChanged(view, before, view.quantity, actor, view.updatedAt),
      );
    return view;
  });
}
