import { totalValueOf } from '../shared/money.js';
import type { Product } from './product.entity.js';

/** A product as every response shows it: both price spellings, totalValue exact to the cent, ISO-8601 UTC dates. */
export interface ProductView {
  id: number;
  name: string;
  quantity: number;
  price: number;
  purchasePrice: number;
  sku: string;
  totalValue: number;
  category: string | null;
  description: string | null;
  createdAt: string;
  updatedAt: string;
  lastUpdated: string;
}

/** A product row as the SQL below selects it (numeric and bigint arrive as exact strings). */
export interface ProductRow {
  id: string;
  name: string;
  quantity: number;
  price: string;
  sku: string;
  total_value: string;
  category: string | null;
  description: string | null;
  created_at: string;
  updated_at: string;
}

const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The select list of a product row for table alias `t`. totalValue is computed by PostgreSQL in numeric
 * (integer x numeric(12,2) is exact), never as a float product.
 */
export const productColumns = (t: string): string =>
  [
    `${t}.id::text as id`,
    `${t}.name`,
    `${t}.quantity`,
    `${t}.price::text as price`,
    `${t}.sku`,
    `(${t}.quantity * ${t}.price)::text as total_value`,
    `${t}.category`,
    `${t}.description`,
    `${iso(`${t}.created_at`)} as created_at`,
    `${iso(`${t}.updated_at`)} as updated_at`,
  ].join(', ');

/** numeric text with at most two decimals -> JSON number (its shortest decimal form is the same value). */
const money = (text: string): number => Number(text);

export function toProductView(row: ProductRow): ProductView {
  const price = money(row.price);
  return {
    id: Number(row.id),
    name: row.name,
    quantity: Number(row.quantity),
    price,
    purchasePrice: price,
    sku: row.sku,
    totalValue: money(row.total_value),
    category: row.category,
    description: row.description,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastUpdated: row.updated_at,
  };
}

/** A product of the unit of work, as toProductView maps the same row read by SQL (totalValue exact in cents). */
export function productViewOf(product: Product): ProductView {
  const price = money(product.price);
  return {
    id: Number(product.id),
    name: product.name,
    quantity: product.quantity,
    price,
    purchasePrice: price,
    sku: product.sku,
    totalValue: totalValueOf(product.price, product.quantity),
    category: product.category ?? null,
    description: product.description ?? null,
    createdAt: product.createdAt.toISOString(),
    updatedAt: product.updatedAt.toISOString(),
    lastUpdated: product.updatedAt.toISOString(),
  };
}

/** A PostgreSQL bigint[] literal from validated digit strings (`{1,2,3}`), bound as one parameter. */
export const bigintArray = (ids: readonly string[]): string => `{${ids.join(',')}}`;
