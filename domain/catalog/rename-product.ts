import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { productViewOf, type ProductView } from './product.view.js';
import { productConflict } from './product-errors.js';
import { lockProduct, touch } from './lock-product.js';

/**
 * Renames a product. The unique index on lower(name) answers clashes with OTHER products (409); renaming a
 * product to a case variant of its own name touches the same row and is allowed.
 */
export async function renameProduct(em: EntityManager, id: string, name: string): Promise<ProductView> {
  try {
    return await em.transactional(async tx => {
      const product = await lockProduct(tx, id, () => new NotFoundError('product.not.found'));
      product.name = name;
      touch(product);
      await tx.flush();
      return productViewOf(product);
    });
  } catch (error) {
    throw productConflict(error, { name });
  }
}
