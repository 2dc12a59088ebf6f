import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { searchPageSchema } from '../presenters/page.js';
import { writeContext, writeHandler } from '../routing/write-handler.js';
import { createDraftOrders } from '../../domain/replenishment/create-draft-orders.js';
import { purchaseOrderViewSchema } from '../../domain/purchasing/purchasing.schemas.js';
import { parsePageRequest } from '../../domain/shared/paging.js';
import { isUuid } from '../../domain/shared/sql.js';
import { getJobStatus } from '../../domain/analytics/rebuild/get-rebuild-status.js';
import {
  requestReplenishmentRun,
  RUN_JOB_PREFIX,
} from '../../domain/replenishment/request-replenishment-run.js';
import { pageSuggestions } from '../../domain/replenishment/page-suggestions.js';
import {
  draftOrdersBody,
  runStatusSchema,
  suggestionsQuery,
  suggestionViewSchema,
} from '../../domain/replenishment/replenishment.schemas.js';

const TAG = 'Replenishment';
const PAGE_RULES = { maxSize: 200, defaultSize: 50, sortable: {}, defaultSort: [] };

/** The replenishment routes (purchasing contract). */
export const replenishmentRoutes = (services: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/replenishment/suggestions',
      summary:
        "What to order today: the last run's demand and levels with each item's current quantity and on-order quantity, soonest order-by date first",
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: suggestionsQuery },
      responses: {
        200: {
          description:
            'Search page of suggestions, with `computedAt` of the last run (null before the first)',
          schema: searchPageSchema(suggestionViewSchema).keys({
            computedAt: Joi.string().isoDate().allow(null).required(),
          }),
        },
      },
      handler: async (req, res, { query }) => {
        const request = parsePageRequest(query, PAGE_RULES);
        // An id that is no UUID names no supplier: nothing of it is due.
        const supplierId =
          query.supplierId === undefined || isUuid(query.supplierId) ? query.supplierId : null;
        res.json(
          await pageSuggestions(
            req.em,
            services.config.replenishment,
            {
              supplierId: supplierId ?? undefined,
              dueWithinDays: query.dueWithinDays,
              none: supplierId === null,
            },
            request,
          ),
        );
      },
    },
    {
      method: 'post',
      path: '/api/admin/replenishment/run',
      changesNoRows: true,
      summary: 'Recompute the suggestions now (single-flight: a waiting or running run is returned)',
      tag: TAG,
      access: 'admin',
      responses: { 202: { description: 'Accepted', schema: Joi.object({ jobId: Joi.string().required() }) } },
      handler: async (req, res) =>
        res
          .status(202)
          .json({ jobId: await requestReplenishmentRun(services.queues, req.actor?.username ?? 'unknown') }),
    },
    {
      method: 'get',
      path: '/api/admin/replenishment/run/:jobId',
      summary: 'State, progress and result (`items`, `suggestions`) of a replenishment run',
      tag: TAG,
      access: 'admin',
      request: { params: Joi.object({ jobId: Joi.string().max(100).required() }) },
      responses: { 200: { description: 'Job state', schema: runStatusSchema } },
      handler: async (_req, res, { params }) =>
        res.json(
          await getJobStatus(
            services.queues,
            'replenishment',
            RUN_JOB_PREFIX,
            params.jobId,
            'replenishment.run.not.found',
          ),
        ),
    },
    {
      method: 'post',
      path: '/api/replenishment/draft-orders',
      summary:
        'DRAFT orders from the current suggestions, one per supplier and 500 lines; items already on an open order are left out',
      tag: TAG,
      access: 'admin',
      refusals: {
        404: { when: 'The supplier does not exist', messageKey: 'error.not.found.supplier' },
      },
      request: { body: draftOrdersBody },
      responses: {
        200: { description: 'Nothing to order: an empty array', schema: Joi.array().max(0) },
        201: { description: 'The DRAFT orders created', schema: Joi.array().items(purchaseOrderViewSchema) },
      },
      handler: writeHandler(services, async (em, req, { body }) => {
        const orders = await createDraftOrders(
          em,
          services.config.replenishment,
          body.supplierId,
          writeContext(req),
        );
        return { status: orders.length > 0 ? 201 : 200, body: orders };
      }),
    },
  ]);
