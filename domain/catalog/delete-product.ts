import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { lockProduct } from './lock-product.js';

/** Deletes a product; 404 when there is none (also for the second of two racing deletions: the row lock orders them). */
export async function deleteProduct(em: EntityManager, id: string): Promise<void> {
  await em.transactional(async tx => {
    const product = await lockProduct(
      tx,
      id,
      () => new NotFoundError('product.delete.not.found', { params: { id } }),
    );
    tx.remove(product);
    await tx.flush();
  });
}
