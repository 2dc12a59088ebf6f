import type { EntityManager } from '@mikro-orm/postgresql';
import { moneyText } from '../shared/money.js';
import { generateSku } from './sku.js';
import { Product } from './product.entity.js';
import { productViewOf, type ProductView } from './product.view.js';
import { productConflict, uniqueIndexOf } from './product-errors.js';

export interface CreateProductInput {
  name: string;
  quantity: number;
  price: number;
  sku?: string;
  category?: string | null;
  description?: string | null;
}

const SKU_ATTEMPTS = 5;

/**
 * Creates a product (one unit of work per attempt). Without a client SKU one is generated (`SKU-XXXXXXXX`) and
 * regenerated on the rare clash; a duplicate name or a client SKU that exists already is 409 (the unique
 * indexes decide, so two racing creations give 201 and 409).
 */
export async function createProduct(em: EntityManager, input: CreateProductInput): Promise<ProductView> {
  for (let attempt = 1; ; attempt += 1) {
    const sku = input.sku ?? generateSku();
    try {
      return await em.transactional(async tx => {
        const product = tx.create(Product, {
          name: input.name,
          quantity: input.quantity,
          price: moneyText(input.price),
          sku,
          category: input.category || null,
          description: input.description || null,
        });
        await tx.flush();
        return productViewOf(product);
      });
    } catch (error) {
      const generatedClash = input.sku === undefined && uniqueIndexOf(error) === 'product_sku_uq';
      if (generatedClash && attempt < SKU_ATTEMPTS) continue;
      throw productConflict(error, { name: input.name, sku });
    }
  }
}
