import { defineEntity, p } from '@mikro-orm/postgresql';
import { transactionTime } from '../shared/database-time.js';

/**
 * A product of the product API. Creation, field updates, renames, price changes and deletion go through the
 * unit of work with the row locked; the quantity writes (one product or a batch) are SQL with their events. `price` is numeric(12,2), kept as its exact string.
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
    /** Stamped by PostgreSQL (transactionTime), as the set-based quantity writes stamp them. */
    createdAt: p.datetime().defaultRaw('now()').onCreate(transactionTime),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(transactionTime).onUpdate(transactionTime),
  },
});

export class Product extends ProductSchema.class {}
ProductSchema.setClass(Product);
