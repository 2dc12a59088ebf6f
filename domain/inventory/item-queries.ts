import type { EntityManager } from '@mikro-orm/postgresql';
import {
  orderByClause,
  parsePageRequest,
  searchPage,
  springPage,
  type PageRules,
  type SearchPage,
  type SpringPage,
} from '../shared/paging.js';
import { containsPattern, isUuid } from '../shared/sql.js';
import { poolQuery } from '../shared/pool-query.js';
import { ITEM_COLUMNS, ITEM_FROM, toItemView, type ItemRow, type ItemView } from './item.view.js';
import { itemNotFound } from './item-errors.js';

/** I1: every item, by name. */
export async function listItems(em: EntityManager): Promise<ItemView[]> {
  const rows = await em.execute<ItemRow[]>(`select ${ITEM_COLUMNS} from ${ITEM_FROM} order by i.name, i.id`);
  return rows.map(toItemView);
}

const ITEM_BY_ID = `select ${ITEM_COLUMNS} from ${ITEM_FROM} where i.id = ?`;

/** I3 (a hot path: straight on the pool). */
export async function getItem(em: EntityManager, id: string): Promise<ItemView> {
  if (!isUuid(id)) throw itemNotFound();
  const rows = await poolQuery<ItemRow>(em, ITEM_BY_ID, [id]);
  if (rows.length === 0) throw itemNotFound();
  return toItemView(rows[0]);
}

/** 404 unless the item exists (I4 answers 404 before it looks at the body). */
export async function assertItemExists(em: EntityManager, id: string): Promise<void> {
  if (!isUuid(id)) throw itemNotFound();
  const rows = await em.execute<unknown[]>('select 1 from inventory_item where id = ?', [id]);
  if (rows.length === 0) throw itemNotFound();
}

/** I6. */
export async function countItems(em: EntityManager): Promise<number> {
  const rows = await em.execute<{ n: string }[]>('select count(*) as n from inventory_item');
  return Number(rows[0].n);
}

const SEARCH_RULES: PageRules = {
  maxSize: 100,
  defaultSize: 20,
  sortable: {
    name: 'lower(i.name)',
    sku: 'lower(i.sku)',
    price: 'i.price',
    quantity: 'i.quantity',
    totalValue: '(i.quantity * i.price)',
    minimumQuantity: 'i.minimum_quantity',
    createdAt: 'i.created_at',
  },
  defaultSort: [{ property: 'name', direction: 'ASC' }],
};

export interface SearchItemsQuery {
  name: string;
  supplierId?: string;
  belowMinimumOnly?: boolean;
  page?: number;
  size?: number;
  sort?: string | string[];
}

/** I7: case-insensitive substring of name or sku (empty = every item), optional supplier and below-minimum. */
export async function searchItems(em: EntityManager, query: SearchItemsQuery): Promise<SearchPage<ItemView>> {
  const request = parsePageRequest(query, SEARCH_RULES);
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.name !== '') {
    where.push('(i.name ilike ? or i.sku ilike ?)');
    params.push(containsPattern(query.name), containsPattern(query.name));
  }
  if (query.supplierId) {
    if (!isUuid(query.supplierId)) return searchPage([], request, 0);
    where.push('i.supplier_id = ?');
    params.push(query.supplierId);
  }
  if (query.belowMinimumOnly) where.push('i.quantity < i.minimum_quantity');
  const whereSql = where.length > 0 ? `where ${where.join(' and ')}` : '';
  const [rows, count] = await Promise.all([
    em.execute<ItemRow[]>(
      `select ${ITEM_COLUMNS} from ${ITEM_FROM} ${whereSql}
       order by ${orderByClause(request.sort, SEARCH_RULES, 'i.id')} limit ? offset ?`,
      [...params, request.size, request.page * request.size],
    ),
    em.execute<{ n: string }[]>(`select count(*) as n from inventory_item i ${whereSql}`, params),
  ]);
  return searchPage(rows.map(toItemView), request, Number(count[0].n));
}

const PAGE_RULES: PageRules = {
  maxSize: 200,
  defaultSize: 20,
  sortable: {
    name: 'lower(i.name)',
    price: 'i.price',
    quantity: 'i.quantity',
    totalValue: '(i.quantity * i.price)',
    createdAt: 'i.created_at',
  },
  defaultSort: [{ property: 'name', direction: 'ASC' }],
};

/** I11: Spring-style page of every item. */
export async function pageItems(
  em: EntityManager,
  query: { page?: number; size?: number; sort?: string | string[] },
): Promise<SpringPage<ItemView>> {
  const request = parsePageRequest(query, PAGE_RULES);
  const [rows, total] = await Promise.all([
    em.execute<ItemRow[]>(
      `select ${ITEM_COLUMNS} from ${ITEM_FROM}
       order by ${orderByClause(request.sort, PAGE_RULES, 'i.id')} limit ? offset ?`,
      [request.size, request.page * request.size],
    ),
    countItems(em),
  ]);
  return springPage(rows.map(toItemView), request, total);
}
