import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { moneyText } from '../shared/money.js';
import { productViewOf, type ProductView } from './product.view.js';
import { lockProduct, touch } from './lock-product.js';

/** Sets a product's price (numeric(12,2)); totalValue in the answer is exact (integer cents). */
export async function updateProductPrice(em: EntityManager, id: string, price: number): Promise<ProductView> {
  return em.transactional(async tx => {
    const product = await lockProduct(tx, id, () => new NotFoundError('product.not.found'));
    product.price = moneyText(price);
    touch(product);
    await tx.flush();
    return productViewOf(product);
  });
}
