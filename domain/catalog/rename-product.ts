import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { productColumns, toProductView, type ProductRow, type ProductView } from './product.view.js';
import { productConflict } from './product-errors.js';

/**
 * Renames a product. The unique index on lower(name) answers clashes with OTHER products (409); renaming a
 * product to a case variant of its own name touches the same row and is allowed.
 */
export async function renameProduct(em: EntityManager, id: string, name: string): Promise<ProductView> {
  try {
    const rows = await em.execute<ProductRow[]>(
      `update product p set name = ?, updated_at = now() where p.id = ? returning ${productColumns('p')}`,
      [name, id],
    );
    if (!rows[0]) throw new NotFoundError('product.not.found');
    return toProductView(rows[0]);
  } catch (error) {
    throw productConflict(error, { name });
  }
}
