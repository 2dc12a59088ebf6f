import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { searchPageSchema, springPageSchema } from '../presenters/page.js';
import {
  historyItemParams,
  historyReasonParams,
  historyViewSchema,
  listHistoryQuery,
  searchHistoryQuery,
} from '../../domain/stock-history/stock-history.schemas.js';
import {
  historyByReason,
  historyOfItem,
  allHistoryQuery,
  pageHistory,
  searchHistory,
} from '../../domain/stock-history/stock-history-queries.js';

import { sendJsonArray, streamOwner } from '../presenters/stream-response.js';
import { toHistoryView } from '../../domain/stock-history/stock-history.view.js';

const TAG = 'Stock history';
const list = Joi.array().items(historyViewSchema);

/** H1-H4 (authenticated; not part of the demo reads). */
export const stockHistoryRoutes = (services: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/stock-history',
      summary: 'H1: every entry, newest first (Spring-style page when `size` is given)',
      tag: TAG,
      access: 'auth',
      stream: 'counted',
      request: { query: listHistoryQuery },
      responses: {
        200: { description: 'Entries', schema: Joi.alternatives(list, springPageSchema(historyViewSchema)) },
      },
      handler: async (req, res, { query }) => {
        if (query.size !== undefined) res.json(await pageHistory(req.em, query));
        else
          await sendJsonArray(
            req,
            res,
            await services.rows.open(allHistoryQuery(), toHistoryView, streamOwner(req)),
          );
      },
    },
    {
      method: 'get',
      path: '/api/stock-history/search',
      summary: 'H4: filtered search (search page)',
      tag: TAG,
      access: 'auth',
      request: { query: searchHistoryQuery },
      responses: { 200: { description: 'Search page', schema: searchPageSchema(historyViewSchema) } },
      handler: async (req, res, { query }) => res.json(await searchHistory(req.em, query)),
    },
    {
      method: 'get',
      path: '/api/stock-history/item/:itemId',
      summary: 'H2: entries of one item, newest first',
      tag: TAG,
      access: 'auth',
      request: { params: historyItemParams },
      responses: { 200: { description: 'Entries', schema: list } },
      handler: async (req, res, { params }) => res.json(await historyOfItem(req.em, params.itemId)),
    },
    {
      method: 'get',
      path: '/api/stock-history/reason/:reason',
      summary: 'H3: entries with one reason, newest first',
      tag: TAG,
      access: 'auth',
      request: { params: historyReasonParams },
      responses: { 200: { description: 'Entries', schema: list } },
      handler: async (req, res, { params }) => res.json(await historyByReason(req.em, params.reason)),
    },
  ]);
