import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { productColumns, toProductView, type ProductRow, type ProductView } from './product.view.js';

/** Sets a product's price (numeric(12,2)); totalValue in the answer is recomputed by PostgreSQL. */
export async function updateProductPrice(em: EntityManager, id: string, price: number): Promise<ProductView> {
  const rows = await em.execute<ProductRow[]>(
    `update product p set price = ?, updated_at = now() where p.id = ? returning ${productColumns('p')}`,
    [price, id],
  );
  if (!rows[0]) throw new NotFoundError('product.not.found');
  return toProductView(rows[0]);
}
