import type { EntityManager } from '@mikro-orm/postgresql';
import { IsolationLevel } from '@mikro-orm/core';
import { PagingError, ValidationError } from '../shared/errors.js';
import {
  orderByClause,
  parsePageRequest,
  searchPage,
  springPage,
  type PageRequest,
  type PageRules,
  type SearchPage,
  type SpringPage,
} from '../shared/paging.js';
import { containsPattern, isUuid, type SqlPart } from '../shared/sql.js';
import { normaliseReason } from '../inventory/reasons.js';
import { countHistory, newestFirstStart, type CountFilters } from './history-totals.js';
import {
  afterCursorSql,
  decodeCursor,
  encodeCursor,
  parseSnapshot,
  readDigest,
  VISIBILITY_SQL,
  type HistoryCursor,
} from './history-cursor.js';
import { HISTORY_COLUMNS, toHistoryView, type StockHistoryView } from './stock-history.view.js';

const NEWEST_FIRST = 'h."timestamp" desc, h.id desc';

const LIST_RULES: PageRules = {
  maxSize: 200,
  defaultSize: 20,
  sortable: { timestamp: 'h."timestamp"', change: 'h.change', createdBy: 'h.created_by' },
  defaultSort: [{ property: 'timestamp', direction: 'DESC' }],
};

/** The history list without `size`: every entry newest first (the route streams it; rows map with toHistoryView). */
export const allHistoryQuery = (): SqlPart => ({
  sql: `select ${HISTORY_COLUMNS} from stock_history h order by ${NEWEST_FIRST}`,
  params: [],
});

/** An item's history without `size`: entries of one item, newest first (they survive the item's deletion); streamed. */
export const itemHistoryQuery = (itemId: string): SqlPart => ({
  sql: isUuid(itemId)
    ? `select ${HISTORY_COLUMNS} from stock_history h where h.item_id = ? order by ${NEWEST_FIRST}`
    : `select ${HISTORY_COLUMNS} from stock_history h where false`,
  params: isUuid(itemId) ? [itemId] : [],
});

/** A reason's history without `size`: entries with one reason, newest first; streamed. */
export const reasonHistoryQuery = (reason: string): SqlPart => ({
  sql: `select ${HISTORY_COLUMNS} from stock_history h where h.reason = ? order by ${NEWEST_FIRST}`,
  params: [normaliseReason(reason)],
});

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

/** Filters of the history search (the history search); the CSV export adds item, reason and author. */
export interface HistoryFilters extends CountFilters {
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

/**
 * The rows of the history's CSV export, as the rest of a select over `stock_history h`: every entry matching
 * the filters, oldest first (the order of a ledger).
 */
export function historyExportRows(filters: HistoryFilters): SqlPart {
  const where = historyWhere(filters) ?? { sql: 'where false', params: [] };
  return { sql: `from stock_history h ${where.sql} order by h."timestamp", h.id`, params: where.params };
}

/** The history's CSV export as StockHistoryView rows (the export's columns are a subset). */
export function historyExportQuery(filters: HistoryFilters): SqlPart {
  const rows = historyExportRows(filters);
  return { sql: `select ${HISTORY_COLUMNS} ${rows.sql}`, params: rows.params };
}

/** A page of a history read and the cursor of the page after it (undefined when no entry follows). */
export interface HistoryPage<P> {
  page: P;
  next?: string;
}

export interface PagedHistoryQuery extends SearchHistoryQuery {
  cursor?: string;
}

/** The key cursors are signed and checked with (cursorKey). */
export type CursorKey = Buffer;

/**
 * One page of the entries matching `filters`, by `page` (offset) or by `cursor` (keyset, see history-cursor).
 * A first page reads its entries, its exact total (countHistory) and its visibility in one snapshot; the pages
 * a cursor walk opens reuse that total and see only what the first page saw.
 */
async function readHistoryPage(
  em: EntityManager,
  read: string,
  rules: PageRules,
  filters: HistoryFilters,
  query: PagedHistoryQuery,
  key: CursorKey,
): Promise<{ content: StockHistoryView[]; request: PageRequest; total: number; next?: string }> {
  if (query.cursor !== undefined && query.page !== undefined)
    throw new PagingError('error.paging.cursor.page', {});
  // The contract: a cursor comes with the filters, sort and size of its walk (its Link repeats them).
  if (query.cursor !== undefined && query.size === undefined)
    throw new PagingError('error.paging.cursor', {});
  const where = historyWhere(filters);
  const request = parsePageRequest(query, rules);
  const digest = readDigest([read, filters, request.sort, request.size]);
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, digest, key);
  if (!where) return { content: [], request, total: 0 };
  const order = `order by ${orderByClause(request.sort, rules, 'h.id')} limit ?`;
  let rows: StockHistoryView[];
  let total: number;
  let visibility: Pick<HistoryCursor, 'snapshot' | 'lsn'>;
  if (cursor) {
    const after = afterCursorSql(cursor, request.sort, rules.sortable);
    const sql = `${where.sql ? `${where.sql} and` : 'where'} ${after.sql}`;
    rows = await em.execute<StockHistoryView[]>(
      `select ${HISTORY_COLUMNS} from stock_history h ${sql} ${order}`,
      [...where.params, ...after.params, request.size + 1],
    );
    request.page = cursor.number;
    total = cursor.total;
    visibility = { snapshot: cursor.snapshot, lsn: cursor.lsn };
  } else {
    [rows, total, visibility] = await em.transactional(
      async tx => {
        const [vis] = await tx.execute<{ snapshot: string; lsn: string }[]>(VISIBILITY_SQL);
        const offset = request.page * request.size;
        const start = newestFirst(request, filters)
          ? await newestFirstStart(tx, countFilters(filters), offset)
          : undefined;
        const found =
          start && start.before === undefined
            ? []
            : await tx.execute<StockHistoryView[]>(
                `select ${HISTORY_COLUMNS} from stock_history h
                 ${start ? `${where.sql ? `${where.sql} and` : 'where'} h."timestamp" < ?` : where.sql} ${order} offset ?`,
                [
                  ...where.params,
                  ...(start ? [start.before] : []),
                  request.size + 1,
                  start ? start.skip : offset,
                ],
              );
        const seen = { snapshot: parseSnapshot(vis.snapshot), lsn: Number(vis.lsn) };
        return [found, await countHistory(tx, countFilters(filters)), seen] as const;
      },
      { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true },
    );
  }
  const content = rows.slice(0, request.size).map(toHistoryView);
  const next =
    rows.length > request.size
      ? encodeCursor(
          {
            read: digest,
            number: request.page + 1,
            total,
            after: content[content.length - 1].id,
            ...visibility,
          },
          key,
        )
      : undefined;
  return { content, request, total, next };
}

/** Whether a page can start from the count rows: newest first, no item and no date filter. */
const newestFirst = (request: PageRequest, f: HistoryFilters) =>
  request.sort.length === 1 &&
  request.sort[0].property === 'timestamp' &&
  request.sort[0].direction === 'DESC' &&
  !f.startDate &&
  !f.endDate &&
  !f.itemName &&
  f.itemId === undefined &&
  !f.createdBy;

/** The filters of a total: the count tables know supplier, reason, item and item name. */
const countFilters = (f: HistoryFilters): CountFilters => ({
  startDate: f.startDate,
  endDate: f.endDate,
  itemName: f.itemName,
  supplierId: f.supplierId,
  itemId: f.itemId,
  reason: f.reason === undefined ? undefined : normaliseReason(f.reason),
});

/** A Spring-style page whose `last` says whether an entry follows (frozen totals can no longer say it). */
async function springHistoryPage(
  em: EntityManager,
  read: string,
  rules: PageRules,
  filters: HistoryFilters,
  query: PagedHistoryQuery,
  key: CursorKey,
): Promise<HistoryPage<SpringPage<StockHistoryView>>> {
  const { content, request, total, next } = await readHistoryPage(em, read, rules, filters, query, key);
  return { page: { ...springPage(content, request, total), last: next === undefined }, next };
}

/** The history list with `size`: a Spring-style page. */
export const pageHistory = (em: EntityManager, query: PagedHistoryQuery, key: CursorKey) =>
  springHistoryPage(em, 'H1', LIST_RULES, {}, query, key);

/** An item's history with `size`: a Spring-style page of one item's entries (none for an id that is not a UUID). */
export const pageItemHistory = (
  em: EntityManager,
  itemId: string,
  query: PagedHistoryQuery,
  key: CursorKey,
) => springHistoryPage(em, 'H2', LIST_RULES, { itemId }, query, key);

/** A reason's history with `size`: a Spring-style page of one reason's entries. */
export const pageReasonHistory = (
  em: EntityManager,
  reason: string,
  query: PagedHistoryQuery,
  key: CursorKey,
) => springHistoryPage(em, 'H3', LIST_RULES, { reason: normaliseReason(reason) }, query, key);

/** The history search: inclusive date range, item-name substring, supplier; search page. */
export async function searchHistory(
  em: EntityManager,
  query: PagedHistoryQuery,
  key: CursorKey,
): Promise<HistoryPage<SearchPage<StockHistoryView>>> {
  const filters: HistoryFilters = {
    startDate: query.startDate,
    endDate: query.endDate,
    itemName: query.itemName || undefined,
    supplierId: query.supplierId || undefined,
  };
  const { content, request, total, next } = await readHistoryPage(
    em,
    'H4',
    SEARCH_RULES,
    filters,
    query,
    key,
  );
  const page = searchPage(content, request, total);
  return { page: { ...page, last: next === undefined }, next };
}
