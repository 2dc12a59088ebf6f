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
import { containsPattern, isUuid, type SqlPart } from '../shared/sql.js';
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

/** H1 without `size`: every entry newest first (the route streams it; rows map with toHistoryView). */
export const allHistoryQuery = (): SqlPart => ({
  sql: `select ${HISTORY_COLUMNS} from stock_history h order by ${NEWEST_FIRST}`,
  params: [],
});

/** H1 with `size`: a Spring-style page. */
export async function pageHistory(
  em: EntityManager,
  query: { page?: number; size?: number; sort?: string | string[] },
): Promise<SpringPage<StockHistoryView>> {
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

/** Filters of the history search (H4); the CSV export adds item, reason and author. */
export interface HistoryFilters {
  startDate?: Date;
  endDate?: Date;
  itemName?: string;
  supplierId?: string;
  itemId?: string;
  reason?: string;
  createdBy?: string;
}

export interface SearchHistoryQuery extends HistoryFilters {
  page?: number;
  size?: number;
  sort?: string | string[];
}

/** `where ...` of the filters (400 on an inverted range); undefined when nothing can match (a non-UUID id). */
function historyWhere(filters: HistoryFilters): SqlPart | undefined {
  if (filters.startDate && filters.endDate && filters.endDate < filters.startDate)
    throw new ValidationError('history.date.range.invalid');
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (filters.startDate) add('h."timestamp" >= ?', filters.startDate.toISOString());
  if (filters.endDate) add('h."timestamp" <= ?', filters.endDate.toISOString());
  if (filters.itemName) add('h.item_name ilike ?', containsPattern(filters.itemName));
  for (const id of [filters.supplierId, filters.itemId]) if (id && !isUuid(id)) return undefined;
  if (filters.supplierId) add('h.supplier_id = ?', filters.supplierId);
  if (filters.itemId) add('h.item_id = ?', filters.itemId);
  if (filters.reason) add('h.reason = ?', normaliseReason(filters.reason));
  if (filters.createdBy) add('h.created_by = ?', filters.createdBy);
  return { sql: where.length > 0 ? `where ${where.join(' and ')}` : '', params };
}

/** The CSV export of the history: every entry matching the filters, oldest first (the order of a ledger). */
export function historyExportQuery(filters: HistoryFilters): SqlPart {
  const where = historyWhere(filters) ?? { sql: 'where false', params: [] };
  return {
    sql: `select ${HISTORY_COLUMNS} from stock_history h ${where.sql} order by h."timestamp", h.id`,
    params: where.params,
  };
}

/** H4: inclusive date range, item-name substring, supplier; search page. */
export async function searchHistory(
  em: EntityManager,
  query: SearchHistoryQuery,
): Promise<SearchPage<StockHistoryView>> {
  const where = historyWhere(query);
  const request = parsePageRequest(query, SEARCH_RULES);
  if (!where) return searchPage([], request, 0);
  const { sql: whereSql, params } = where;
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
