import type { EntityManager } from '@mikro-orm/postgresql';
import { DuplicateResourceError } from '../shared/errors.js';
import { lowerEquals } from '../shared/lower-equals.js';
import { Product } from './product.entity.js';
import { createProduct, type CreateProductInput } from './create-product.js';

/** The 8 demo products of the contract: total stock value 2655.00; low stock: Gamma, Delta, Theta. */
export const DEMO_PRODUCTS: readonly CreateProductInput[] = [
  { name: 'Alpha Widget', quantity: 10, price: 50, category: 'Widgets', description: 'Demo product' },
  { name: 'Beta Gadget', quantity: 5, price: 30, category: 'Gadgets', description: 'Demo product' },
  { name: 'Gamma Tool', quantity: 3, price: 20, category: 'Tools', description: 'Demo product' },
  { name: 'Delta Device', quantity: 3, price: 10, category: 'Devices', description: 'Demo product' },
  {
    name: 'Epsilon Accessory',
    quantity: 20,
    price: 40,
    category: 'Accessories',
    description: 'Demo product',
  },
  { name: 'Zeta Instrument', quantity: 7, price: 60, category: 'Instruments', description: 'Demo product' },
  { name: 'Eta Apparatus', quantity: 15, price: 25, category: 'Apparatus', description: 'Demo product' },
  { name: 'Theta Machine', quantity: 4, price: 80, category: 'Machines', description: 'Demo product' },
];

/** Creates the demo products whose names do not exist yet (idempotent; existing products are not touched). */
export async function seedDemoProducts(em: EntityManager): Promise<number> {
  let created = 0;
  for (const product of DEMO_PRODUCTS) {
    if ((await em.count(Product, lowerEquals('name', product.name))) > 0) continue;
    try {
      await createProduct(em, product);
      created += 1;
    } catch (error) {
      // Created concurrently by another seeding process: that is the state we want.
      if (!(error instanceof DuplicateResourceError)) throw error;
    }
  }
  return created;
}
