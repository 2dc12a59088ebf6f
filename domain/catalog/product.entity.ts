import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * A product of the product API. Writes that change quantities go through guarded SQL updates (see the use
 * cases); the entity describes the table for the ORM. `price` is numeric(12,2), kept as its exact string.
 */
export const ProductSchema = defineEntity({
  name: 'Product',
  tableName: 'product',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    name: p.string().length(255),
    quantity: p.integer(),
    price: p.decimal('string').precision(12).scale(2),
    sku: p.string().length(50),
    category: p.string().length(100).nullable(),
    description: p.string().length(1000).nullable(),
    createdAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class Product extends ProductSchema.class {}
ProductSchema.setClass(Product);
