import type { Request, Response } from 'express';
import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes, type RouteDefinition } from '../routing/route-definition.js';
import type { SqlPart } from '../../domain/shared/sql.js';
import { searchPageSchema, springPageSchema } from '../presenters/page.js';
import {
  historyEntryParams,
  historyItemParams,
  reverseEntryBody,
  historyReasonParams,
  historyViewSchema,
  listHistoryQuery,
  searchHistoryQuery,
} from '../../domain/stock-history/stock-history.schemas.js';
import {
  allHistoryQuery,
  itemHistoryQuery,
  pageHistory,
  pageItemHistory,
  pageReasonHistory,
  reasonHistoryQuery,
  searchHistory,
  type HistoryPage,
} from '../../domain/stock-history/stock-history-queries.js';
import { setNextLink } from '../presenters/next-link.js';
import { cursorKey } from '../../domain/stock-history/history-cursor.js';

import { sendJsonArray, streamOwner } from '../presenters/stream-response.js';
import { toHistoryView } from '../../domain/stock-history/stock-history.view.js';
import { writeContext, writeHandler } from '../routing/write-handler.js';
import { reverseEntry } from '../../domain/stock-history/reverse-entry.js';
import { getHistoryEntry } from '../../domain/stock-history/get-entry.js';

const TAG = 'Stock history';
const list = Joi.array().items(historyViewSchema);
const pageOrList = Joi.alternatives(list, springPageSchema(historyViewSchema));
const NEXT_LINK = {
  Link: 'With a page: `<next-page URL>; rel="next"`, the URL holding the `cursor` of the next page; absent on the last page',
};

/** A page with its `Link` header (which always names the page's size: a cursor is only taken with one). */
function sendPage<P extends { size: number }>(req: Request, res: Response, { page, next }: HistoryPage<P>) {
  setNextLink(req, res, next, page.size);
  res.json(page);
}

/** The history reads (authenticated; not part of the demo reads). */
export const stockHistoryRoutes = (services: Services) => {
  const key = cursorKey(services.config.sessionSecret);
  /** The history reads: with `size` a page and its Link header, else every entry as a counted stream. */
  const pageOrStream = async (
    req: Request,
    res: Response,
    query: { size?: number; cursor?: string },
    page: () => Promise<HistoryPage<{ size: number }>>,
    rows: () => SqlPart,
  ) => {
    // A cursor without `size` is a page request that lacks its size (400), not a request for the whole list.
    if (query.size !== undefined || query.cursor !== undefined) sendPage(req, res, await page());
    else
      await sendJsonArray(req, res, await services.rows.open(rows(), toHistoryView, streamOwner(req, res)));
  };
  /** An item's history and a reason's history: the entries whose one path parameter (the item id, the reason) matches, paged or streamed. */
  const entriesOfOne = (
    path: string,
    summary: string,
    params: Joi.ObjectSchema,
    page: typeof pageItemHistory,
    rows: (value: string) => SqlPart,
    absentReadsEmpty = false,
  ): RouteDefinition => {
    const name = path.slice(path.lastIndexOf(':') + 1);
    return {
      method: 'get',
      path,
      summary,
      tag: TAG,
      access: 'auth',
      absentReadsEmpty,
      stream: 'counted',
      request: { params, query: listHistoryQuery },
      responses: { 200: { description: 'Entries', schema: pageOrList, headers: NEXT_LINK } },
      handler: (req, res, input) =>
        pageOrStream(
          req,
          res,
          input.query,
          () => page(req.em, input.params[name], input.query, key),
          () => rows(input.params[name]),
        ),
    };
  };
  return defineRoutes([
    {
      method: 'get',
      path: '/api/stock-history',
      summary: 'Every entry, newest first (Spring-style page when `size` is given)',
      tag: TAG,
      access: 'auth',
      stream: 'counted',
      request: { query: listHistoryQuery },
      responses: { 200: { description: 'Entries', schema: pageOrList, headers: NEXT_LINK } },
      handler: (req, res, { query }) =>
        pageOrStream(req, res, query, () => pageHistory(req.em, query, key), allHistoryQuery),
    },
    {
      method: 'get',
      path: '/api/stock-history/search',
      summary: 'Filtered search (search page)',
      tag: TAG,
      access: 'auth',
      request: { query: searchHistoryQuery },
      responses: {
        200: { description: 'Search page', schema: searchPageSchema(historyViewSchema), headers: NEXT_LINK },
      },
      handler: async (req, res, { query }) => sendPage(req, res, await searchHistory(req.em, query, key)),
    },
    entriesOfOne(
      '/api/stock-history/item/:itemId',
      'Entries of one item, newest first (streamed; Spring-style page when `size` is given)',
      historyItemParams,
      pageItemHistory,
      itemHistoryQuery,
      true,
    ),
    entriesOfOne(
      '/api/stock-history/reason/:reason',
      'Entries with one reason, newest first (streamed; Spring-style page when `size` is given)',
      historyReasonParams,
      pageReasonHistory,
      reasonHistoryQuery,
    ),
    {
      method: 'get',
      path: '/api/stock-history/:id',
      summary: 'One entry (with reversalOf / reversedBy / note)',
      tag: TAG,
      access: 'auth',
      request: { params: historyEntryParams },
      responses: { 200: { description: 'Entry', schema: historyViewSchema } },
      handler: async (_req, res, { params }) => res.json(await getHistoryEntry(services.orm.em, params.id)),
    },
    {
      method: 'post',
      path: '/api/stock-history/:id/reverse',
      summary:
        'Reverse an entry: a compensating change through the adjustment path, at most once per entry (201 with the new entry)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: {
          when: 'The entry was reversed already, is a reversal or a receipt, or its item was deleted',
          messageKey: 'stock.history.reversal.already',
        },
        422: {
          when: 'The compensating change would take the quantity below 0 or above the maximum',
          messageKey: 'inventory.item.quantity.negative',
        },
      },
      request: { params: historyEntryParams, body: reverseEntryBody },
      responses: {
        201: {
          description: 'The reversing entry (written to the history by the consumer)',
          schema: historyViewSchema,
        },
      },
      handler: writeHandler(services, async (em, req, { params, body }) => {
        const { entry, eventIds } = await reverseEntry(
          em,
          { id: params.id, note: body?.note },
          writeContext(req),
        );
        return {
          status: 201,
          body: entry,
          headers: { Location: `/api/stock-history/${entry.id}` },
          eventIds,
        };
      }),
    },
  ]);
};
