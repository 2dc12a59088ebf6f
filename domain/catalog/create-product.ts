import type { EntityManager } from '@mikro-orm/postgresql';
import { generateSku } from './sku.js';
import { productColumns, toProductView, type ProductRow, type ProductView } from './product.view.js';
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
 * Creates a product. Without a client SKU one is generated (`SKU-XXXXXXXX`) and regenerated on the rare
 * clash; a duplicate name or a client SKU that exists already is 409.
 */
export async function createProduct(em: EntityManager, input: CreateProductInput): Promise<ProductView> {
  for (let attempt = 1; ; attempt += 1) {
    const sku = input.sku ?? generateSku();
    try {
      const rows = await em.execute<ProductRow[]>(
        `insert into product (name, quantity, price, sku, category, description)
         values (?, ?, ?, ?, ?, ?)
         returning ${productColumns('product')}`,
        [input.name, input.quantity, input.price, sku, input.category || null, input.description || null],
      );
      return toProductView(rows[0]);
    } catch (error) {
      const generatedClash = input.sku === undefined && uniqueIndexOf(error) === 'product_sku_uq';
      if (generatedClash && attempt < SKU_ATTEMPTS) continue;
      throw productConflict(error, { name: input.name, sku });
    }
  }
}
