import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import type { SqlPart } from '../shared/sql.js';
import type { ProductSort } from './catalog.schemas.js';
import { productColumns, toProductView, type ProductRow, type ProductView } from './product.view.js';

/** Sortable properties -> SQL expressions (allow-list; nothing from the request reaches SQL text). */
const SORT_SQL: Record<ProductSort, string> = {
  id: 'p.id',
  name: 'lower(p.name)',
  quantity: 'p.quantity',
  price: 'p.price',
  totalValue: '(p.quantity * p.price)',
  createdAt: 'p.created_at',
};

const select = (em: EntityManager, tail: string, params: unknown[]) =>
  em
    .execute<ProductRow[]>(`select ${productColumns('p')} from product p ${tail}`, params)
    .then(rows => rows.map(toProductView));

export async function getProduct(em: EntityManager, id: string): Promise<ProductView> {
  const rows = await select(em, 'where p.id = ?', [id]);
  if (!rows[0]) throw new NotFoundError('product.not.found.id', { params: { id } });
  return rows[0];
}

export interface ListOptions {
  limit?: number;
  page?: number;
  sortBy?: ProductSort;
  order?: 'asc' | 'desc';
}

/**
 * Every product (sorted by id unless asked otherwise); `limit` keeps the first N, `page` skips page x limit.
 * Unbounded, so the route streams it from a cursor; rows map with toProductView.
 */
export function productListQuery(options: ListOptions = {}): SqlPart {
  const direction = options.order === 'desc' ? 'desc' : 'asc';
  const order = `order by ${SORT_SQL[options.sortBy ?? 'id']} ${direction}, p.id ${direction}`;
  const sql = `select ${productColumns('p')} from product p ${order}`;
  if (options.limit === undefined) return { sql, params: [] };
  return { sql: `${sql} limit ? offset ?`, params: [options.limit, (options.page ?? 0) * options.limit] };
}

export interface ProductPage {
  content: ProductView[];
  pageNumber: number;
  currentPage: number;
  pageSize: number;
  totalElements: number;
  totalPages: number;
}

/** Zero-based page sorted by id; a page past the end is empty with unchanged totals. */
export async function pagedProducts(em: EntityManager, page: number, size: number): Promise<ProductPage> {
  const [count] = await em.execute<{ total: string }[]>('select count(*)::text as total from product');
  const totalElements = Number(count.total);
  const content = await select(em, 'order by p.id limit ? offset ?', [size, page * size]);
  return {
    content,
    pageNumber: page,
    currentPage: page,
    pageSize: size,
    totalElements,
    totalPages: Math.ceil(totalElements / size),
  };
}

/** `%`, `_` and `\` are taken literally in a LIKE pattern (backslash is PostgreSQL's default escape). */
export const likeContains = (term: string): string => `%${term.replace(/[\\%_]/g, c => `\\${c}`)}%`;

/**
 * Case-insensitive substring search: `name` on the name only; `q` on name, description, sku and category.
 * Both given: both must match.
 */
export async function searchProducts(
  em: EntityManager,
  terms: { name?: string; q?: string },
): Promise<ProductView[]> {
  const where: string[] = [];
  const params: string[] = [];
  if (terms.name) {
    where.push('p.name ilike ?');
    params.push(likeContains(terms.name));
  }
  if (terms.q) {
    where.push('(p.name ilike ? or p.description ilike ? or p.sku ilike ? or p.category ilike ?)');
    const pattern = likeContains(terms.q);
    params.push(pattern, pattern, pattern, pattern);
  }
  return select(em, `where ${where.join(' and ')} order by p.id`, params);
}

export async function lowStockProducts(em: EntityManager, threshold: number): Promise<ProductView[]> {
  return select(em, 'where p.quantity < ? order by p.id', [threshold]);
}

/** Sum of quantity x price over all products, summed by PostgreSQL in numeric (exact), 0 when empty. */
export async function totalStockValue(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ total: string }[]>(
    'select coalesce(sum(quantity * price), 0)::text as total from product',
  );
  return Number(row.total);
}
