import type { EntityManager } from '@mikro-orm/postgresql';
import { ValidationError } from '../shared/errors.js';
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
import { normaliseReason } from './reasons.js';
import { HISTORY_COLUMNS, toHistoryView, type StockHistoryView } from './stock-history.view.js';

const NEWEST_FIRST = 'h."timestamp" desc, h.id desc';

const LIST_RULES: PageRules = {
  maxSize: 200,
  defaultSize: 20,
  sortable: { timestamp: 'h."timestamp"', change: 'h.change', createdBy: 'h.created_by' },
  defaultSort: [{ property: 'timestamp', direction: 'DESC' }],
};

async function rows(
  em: EntityManager,
  where: string,
  params: unknown[],
  tail = '',
): Promise<StockHistoryView[]> {
  const result = await em.execute<StockHistoryView[]>(
    `select ${HISTORY_COLUMNS} from stock_history h ${where} ${tail}`,
    params,
  );
  return result.map(toHistoryView);
}

async function count(em: EntityManager, where: string, params: unknown[]): Promise<number> {
  const result = await em.execute<{ n: string }[]>(
    `select count(*) as n from stock_history h ${where}`,
    params,
  );
  return Number(result[0].n);
}

/** H1: every entry newest first, or a Spring-style page when `size` is present. */
export async function listHistory(
  em: EntityManager,
  query: { page?: number; size?: number; sort?: string | string[] },
): Promise<StockHistoryView[] | SpringPage<StockHistoryView>> {
  if (query.size === undefined) return rows(em, '', [], `order by ${NEWEST_FIRST}`);
  const request = parsePageRequest(query, LIST_RULES);
  const [content, total] = await Promise.all([
    rows(
      em,
      '',
      [request.size, request.page * request.size],
      `order by ${orderByClause(request.sort, LIST_RULES, 'h.id')} limit ? offset ?`,
    ),
    count(em, '', []),
  ]);
  return springPage(content, request, total);
}

/** H2: entries of one item, newest first (they survive the item's deletion). */
export async function historyOfItem(em: EntityManager, itemId: string): Promise<StockHistoryView[]> {
  if (!isUuid(itemId)) return [];
  return rows(em, 'where h.item_id = ?', [itemId], `order by ${NEWEST_FIRST}`);
}

/** H3: entries with one reason, newest first. */
export async function historyByReason(em: EntityManager, reason: string): Promise<StockHistoryView[]> {
  return rows(em, 'where h.reason = ?', [normaliseReason(reason)], `order by ${NEWEST_FIRST}`);
}

const SEARCH_RULES: PageRules = {
  maxSize: 200,
  defaultSize: 50,
  sortable: {
    timestamp: 'h."timestamp"',
    itemId: 'h.item_id',
    change: 'h.change',
    createdBy: 'h.created_by',
  },
  defaultSort: [{ property: 'timestamp', direction: 'DESC' }],
};

export interface SearchHistoryQuery {
  startDate?: Date;
  endDate?: Date;
  itemName?: string;
  supplierId?: string;
  page?: number;
  size?: number;
  sort?: string | string[];
}

/** H4: inclusive date range, item-name substring, supplier; search page. */
export async function searchHistory(
  em: EntityManager,
  query: SearchHistoryQuery,
): Promise<SearchPage<StockHistoryView>> {
  if (query.startDate && query.endDate && query.endDate < query.startDate)
    throw new ValidationError('history.date.range.invalid');
  const request = parsePageRequest(query, SEARCH_RULES);
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.startDate) {
    where.push('h."timestamp" >= ?');
    params.push(query.startDate.toISOString());
  }
  if (query.endDate) {
    where.push('h."timestamp" <= ?');
    params.push(query.endDate.toISOString());
  }
  if (query.itemName) {
    where.push('h.item_name ilike ?');
    params.push(containsPattern(query.itemName));
  }
  if (query.supplierId) {
    if (!isUuid(query.supplierId)) return searchPage([], request, 0);
    where.push('h.supplier_id = ?');
    params.push(query.supplierId);
  }
  const whereSql = where.length > 0 ? `where ${where.join(' and ')}` : '';
  const [content, total] = await Promise.all([
    rows(
      em,
      whereSql,
      [...params, request.size, request.page * request.size],
      `order by ${orderByClause(request.sort, SEARCH_RULES, 'h.id')} limit ? offset ?`,
    ),
    count(em, whereSql, params),
  ]);
  return searchPage(content, request, total);
}
