import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReplenishmentSettings } from '../../config/env.js';
import { poolRun, type SqlRun } from '../shared/native-transaction.js';
import { searchPage, type PageRequest } from '../shared/paging.js';
import { isoSql } from '../shared/sql.js';
import { datedCoverLimit } from './replenishment-formulas.js';
import { daysOfCover, dueItem, dueOrderKey } from './due-items.js';
import {
  ORDER,
  suggestionsSql,
  toView,
  utcToday,
  VIEW_COLUMNS,
  type JsonRow,
  type SuggestionPage,
} from './suggestion-queries.js';

export interface SuggestionFilter {
  supplierId?: string;
  dueWithinDays?: number;
  /** The filter matches no item (a supplier id that is no UUID). */
  none?: boolean;
}

const KEY = dueOrderKey('i');
const COVER = daysOfCover('i');
/** The longest lead time (supplier and default: 0..365): an order-by key at most this far from the last date. */
const MAX_LEAD = 365;

/**
 * The due items (`$1` the supplier or null: two texts, so each reads its own index) with a condition, in the
 * partial indexes of migration ReplenishmentDue.
 */
const dueWhere = (bySupplier: boolean, condition: string) =>
  `${dueItem('i')} and ${bySupplier ? 'i.supplier_id = $1::uuid' : '$1::uuid is null'} and ${condition}`;

/**
 * The dated rows (order-by date set: demand and daysOfCover up to the last date; the key's order is the suggestions's) and
 * the undated ones (no demand, or beyond the last date), in name order. $2 = the last date's days of cover,
 * $3 = the key's bound (dueWithinDays or that limit), then limit and offset.
 */
export const datedIds = (bySupplier: boolean) => `
  select i.id from inventory_item i
  where ${dueWhere(bySupplier, `${KEY} <= $3::bigint and ${COVER} <= $2::bigint`)}
  order by ${KEY}, i.name, i.id limit $4 offset $5`;

const undatedIds = (bySupplier: boolean) => `
  select i.id from inventory_item i
  where ${dueWhere(bySupplier, `(${KEY} is null or (${KEY} > $2::bigint - ${MAX_LEAD} and ${COVER} > $2::bigint))`)}
  order by i.name, i.id limit $3 offset $4`;

/** How many due rows are dated: those with an order-by key, less the few with one beyond the last date. */
const datedCount = (bySupplier: boolean) => `
  select (select count(*) from inventory_item i where ${dueWhere(bySupplier, `${KEY} is not null`)})
       - (select count(*) from inventory_item i
          where ${dueWhere(bySupplier, `${KEY} > $2::bigint - ${MAX_LEAD} and ${COVER} > $2::bigint`)})::int as n`;

export const dueCount = (bySupplier: boolean, within: boolean) => `
  select count(*)::int as n from inventory_item i
  where ${dueWhere(bySupplier, within ? `${KEY} <= $2::bigint` : 'true')}`;

/** The view rows of the chosen items ($3), in the suggestions's order. */
const VIEW = `select coalesce(json_agg(p), '[]') as rows
  from (select ${VIEW_COLUMNS} from (${suggestionsSql('i.id = any($3::uuid[])')}) x order by ${ORDER}) p`;

/**
 * The suggestions: one page of today's suggestions, sorted by order-by date (soonest first, nulls last), then item name;
 * `computedAt` of the last run (null and an empty page before the first). Only due items are read: their count
 * and the page's ids from the partial index (in its order), then the page's rows with every input.
 */
export async function pageSuggestions(
  em: EntityManager,
  settings: ReplenishmentSettings,
  filter: SuggestionFilter,
  request: PageRequest,
  today: string = utcToday(),
): Promise<SuggestionPage> {
  const sql = await poolRun(em);
  const [run] = await sql<{ computed_at: string }>(
    `select ${isoSql('computed_at')} as computed_at from replenishment_run`,
  );
  if (!run) return { ...searchPage([], request, 0), computedAt: null };
  if (filter.none) return { ...searchPage([], request, 0), computedAt: run.computed_at };
  const by = filter.supplierId !== undefined;
  const supplier = filter.supplierId ?? null;
  const limit = datedCoverLimit(today);
  const within = filter.dueWithinDays;
  const [{ n: total }] = await sql<{ n: number }>(
    dueCount(by, within !== undefined),
    within === undefined ? [supplier] : [supplier, within],
  );
  const offset = request.page * request.size;
  const ids = (
    await sql<{ id: string }>(datedIds(by), [supplier, limit, within ?? limit, request.size, offset])
  ).map(row => row.id);
  if (within === undefined && ids.length < request.size && offset + ids.length < total)
    ids.push(...(await undatedPage(sql, by, supplier, limit, offset, request.size - ids.length)));
  const [{ rows }] =
    ids.length === 0
      ? [{ rows: [] as JsonRow[] }]
      : await sql<{ rows: JsonRow[] }>(VIEW, [today, settings.defaultLeadDays, ids]);
  return {
    ...searchPage(
      rows.map(row => toView(row, settings.serviceLevel)),
      request,
      total,
    ),
    computedAt: run.computed_at,
  };
}

/** The undated rows that follow the dated ones on a page: `count` from the page's start past the dated rows. */
async function undatedPage(
  sql: SqlRun,
  bySupplier: boolean,
  supplier: string | null,
  limit: number,
  offset: number,
  count: number,
): Promise<string[]> {
  const [{ n: dated }] = await sql<{ n: number }>(datedCount(bySupplier), [supplier, limit]);
  const rows = await sql<{ id: string }>(undatedIds(bySupplier), [
    supplier,
    limit,
    count,
    Math.max(0, offset - dated),
  ]);
  return rows.map(row => row.id);
}
