import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { recordEvent } from '../outbox/record-event.js';
import { productColumns, toProductView, type ProductRow, type ProductView } from './product.view.js';
import { productConflict } from './product-errors.js';
import { PRODUCT_QUANTITY_CHANGED, quantityChanged } from './product-events.js';

export interface UpdateProductFieldsInput {
  name?: string;
  quantity?: number;
  price?: number;
  sku?: string;
  category?: string | null;
  description?: string | null;
}

/** Column each updatable field writes; the SET list is built only from this allow-list. */
const COLUMNS: Record<keyof UpdateProductFieldsInput, string> = {
  name: 'name',
  quantity: 'quantity',
  price: 'price',
  sku: 'sku',
  category: 'category',
  description: 'description',
};

/**
 * Partial update: only the given fields change. The row is locked first, so a quantity change knows the value
 * it replaces and writes its outbox event in the same transaction (no lost update, never below 0).
 */
export async function updateProductFields(
  em: EntityManager,
  id: string,
  input: UpdateProductFieldsInput,
  actor: string,
): Promise<ProductView> {
  const fields = (Object.keys(COLUMNS) as (keyof UpdateProductFieldsInput)[]).filter(
    f => input[f] !== undefined,
  );
  try {
    return await em.transactional(async tem => {
      const locked = await tem.execute<{ quantity: number }[]>(
        'select quantity from product where id = ? for update',
        [id],
      );
      if (!locked[0]) throw new NotFoundError('product.not.found.id', { params: { id } });
      const before = locked[0].quantity;
      const sets = fields.map(f => `${COLUMNS[f]} = ?`);
      const values = fields.map(f => {
        const value = input[f];
        return (f === 'category' || f === 'description') && value === '' ? null : value;
      });
      const rows = await tem.execute<ProductRow[]>(
        `update product p set ${[...sets, 'updated_at = now()'].join(', ')}
         where p.id = ? returning ${productColumns('p')}`,
        [...values, id],
      );
      const view = toProductView(rows[0]);
      if (view.quantity !== before)
        await recordEvent(
          tem,
          PRODUCT_QUANTITY_CHANGED,
          rows[0].id,
          quantityChanged(view, before, view.quantity, actor, view.updatedAt),
        );
      return view;
    });
  } catch (error) {
    throw productConflict(error, { name: input.name, sku: input.sku });
  }
}
