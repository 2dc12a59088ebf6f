import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { transactionTime } from '../shared/database-time.js';
import type { AppError } from '../shared/errors.js';
import { Product } from './product.entity.js';

/**
 * The product `id` of the unit of work, its row locked for the transaction and read from it (even when the
 * EntityManager holds the product already); `notFound` when there is none.
 */
export async function lockProduct(tx: EntityManager, id: string, notFound: () => AppError): Promise<Product> {
  const product = await tx.findOne(Product, id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!product) throw notFound();
  return product;
}

/** Every write of a product sets its updated_at, also one that leaves every field as it was. */
export const touch = (product: Product): void => {
  product.updatedAt = transactionTime();
};
