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
import { containsPattern, isUuid, type SqlPart } from '../shared/sql.js';
import { poolQuery } from '../shared/pool-query.js';
import { ITEM_COLUMNS, ITEM_FROM, toItemView, type ItemRow, type ItemView } from './item.view.js';
import { itemNotFound } from './item-errors.js';

/** The item list: every item, by name (unpaged: the route streams it from a cursor; rows map with toItemView). */
export const allItemsQuery = (): SqlPart => ({
  sql: `select ${ITEM_COLUMNS} from ${ITEM_FROM} order by i.name, i.id`,
  params: [],
});

const ITEM_BY_ID = `select ${ITEM_COLUMNS} from ${ITEM_FROM} where i.id = ?`;

/** The item read (a hot path: straight on the pool). */
export async function getItem(em: EntityManager, id: string): Promise<ItemView> {
  if (!isUuid(id)) throw itemNotFound();
  const rows = await poolQuery<ItemRow>(em, ITEM_BY_ID, [id]);
  if (rows.length === 0) throw itemNotFound();
  return toItemView(rows[0]);
}

/** 404 unless the item exists (the item update (PUT) answers 404 before it looks at the body). */
export async function assertItemExists(em: EntityManager, id: string): Promise<void> {
  if (!isUuid(id)) throw itemNotFound();
  const rows = await em.execute<unknown[]>('select 1 from inventory_item where id = ?', [id]);
  if (rows.length === 0) throw itemNotFound();
}

/** The item count. */
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

/** The filters of the item search (the item search), shared by the CSV export. */
export interface ItemFilters {
  name?: string;
  supplierId?: string;
  belowMinimumOnly?: boolean;
}

export interface SearchItemsQuery extends ItemFilters {
  name: string;
  page?: number;
  size?: number;
  sort?: string | string[];
}

/** `where ...` of the filters (empty name = every item); undefined when nothing can match (a non-UUID id). */
function itemWhere(filters: ItemFilters): SqlPart | undefined {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filters.name) {
    where.push('(i.name ilike ? or i.sku ilike ?)');
    params.push(containsPattern(filters.name), containsPattern(filters.name));
  }
  if (filters.supplierId) {
    if (!isUuid(filters.supplierId)) return undefined;
    where.push('i.supplier_id = ?');
    params.push(filters.supplierId);
  }
  if (filters.belowMinimumOnly) where.push('i.quantity < i.minimum_quantity');
  return { sql: where.length > 0 ? `where ${where.join(' and ')}` : '', params };
}

/** The CSV export of items: the search filters, every match, by name. */
export function itemExportQuery(filters: ItemFilters): SqlPart {
  const where = itemWhere(filters) ?? { sql: 'where false', params: [] };
  return {
    sql: `select ${ITEM_COLUMNS} from ${ITEM_FROM} ${where.sql} order by lower(i.name), i.id`,
    params: where.params,
  };
}

/** The item search: case-insensitive substring of name or sku (empty = every item), optional supplier and below-minimum. */
export async function searchItems(em: EntityManager, query: SearchItemsQuery): Promise<SearchPage<ItemView>> {
  const request = parsePageRequest(query, SEARCH_RULES);
  const where = itemWhere(query);
  if (!where) return searchPage([], request, 0);
  const { sql: whereSql, params } = where;
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

/** The items page (GET /api/items): Spring-style page of every item. */
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
