import Joi from 'joi';
import type { Request } from 'express';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { preparedWriteHandler, writeContext, writeHandler } from '../routing/write-handler.js';
import { searchPageSchema, springPageSchema } from '../presenters/page.js';
import {
  adjustQuantityQuery,
  createItemBody,
  deleteItemQuery,
  itemIdParams,
  itemViewSchema,
  listItemsPageQuery,
  renameQuery,
  searchItemsQuery,
  updateItemBody,
  updatePriceQuery,
} from '../../domain/inventory/inventory.schemas.js';
import {
  assertItemExists,
  countItems,
  getItem,
  allItemsQuery,
  pageItems,
  searchItems,
} from '../../domain/inventory/item-queries.js';
import { createItem } from '../../domain/inventory/create-item.js';
import { updateItem } from '../../domain/inventory/update-item.js';
import { deleteItem } from '../../domain/inventory/delete-item.js';
import { adjustQuantity } from '../../domain/inventory/adjust-quantity.js';
import { updatePrice } from '../../domain/inventory/update-price.js';
import { renameItem } from '../../domain/inventory/rename-item.js';
import { parseIfMatch } from '../../domain/inventory/item-errors.js';
import { toItemView, type ItemView } from '../../domain/inventory/item.view.js';
import { sendJsonArray } from '../presenters/stream-response.js';
import {
  inventoryValueQuery,
  inventoryValueSchema,
  itemAsOfQuery,
  itemAsOfSchema,
  itemChangesQuery,
  itemChangesSchema,
} from '../../domain/inventory/ledger.schemas.js';
import { itemAsOf } from '../../domain/inventory/item-as-of.js';
import { inventoryValueAsOf } from '../../domain/inventory/inventory-value-as-of.js';
import { UnauthorizedError } from '../../domain/shared/errors.js';
import { readItemChanges } from '../../domain/inventory/item-changes-feed.js';

const TAG = 'Inventory';
const etag = (item: ItemView) => ({ ETag: `"${item.version}"` });
const ifMatch = (req: Request) => parseIfMatch(req.get('if-match'));
const itemResponse = (description: string) => ({ description, schema: itemViewSchema });

/** The item routes. Literal paths (`count`, `search`) are mounted before `/:id`. */
export const itemRoutes = (services: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/inventory',
      summary: 'Every inventory item',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      stream: 'uncounted',
      responses: { 200: { description: 'Items', schema: Joi.array().items(itemViewSchema) } },
      handler: async (req, res) =>
        sendJsonArray(req, res, await services.lists.open(allItemsQuery(), toItemView)),
    },
    {
      method: 'get',
      path: '/api/inventory/count',
      summary: 'Number of items',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      responses: { 200: { description: 'Count', schema: Joi.number().integer() } },
      handler: async (req, res) => res.json(await countItems(req.em)),
    },
    {
      method: 'get',
      path: '/api/inventory/search',
      summary: 'Search by name or sku, supplier, below minimum (search page)',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: searchItemsQuery },
      responses: { 200: { description: 'Search page', schema: searchPageSchema(itemViewSchema) } },
      handler: async (req, res, { query }) => res.json(await searchItems(req.em, query as never)),
    },
    {
      method: 'get',
      path: '/api/inventory/changes',
      summary:
        'Incremental sync: item changes after the cursor `since` in commit order (410 once the cursor is older than the retention)',
      tag: TAG,
      access: 'auth',
      refusals: {
        410: {
          when: 'The cursor is older than the change feed keeps',
          messageKey: 'inventory.changes.cursor.expired',
        },
      },
      request: { query: itemChangesQuery },
      responses: { 200: { description: 'Changes and the next cursor', schema: itemChangesSchema } },
      handler: async (_req, res, { query }) =>
        res.json(await readItemChanges(services.orm.em, { since: query.since, limit: query.limit })),
    },
    {
      method: 'get',
      path: '/api/inventory/value',
      summary: 'Point in time: stock value, quantity and number of items as of an instant (per supplier)',
      tag: TAG,
      access: 'auth',
      request: { query: inventoryValueQuery },
      responses: { 200: { description: 'Value as of', schema: inventoryValueSchema } },
      handler: async (_req, res, { query }) =>
        res.json(
          await inventoryValueAsOf(services.orm.em, { asOf: query.asOf, supplierId: query.supplierId }),
        ),
    },
    {
      method: 'post',
      path: '/api/inventory',
      summary: 'Create an item (quantity > 0 books INITIAL_STOCK)',
      tag: TAG,
      access: 'admin',
      refusals: {
        404: { when: 'The supplier does not exist', messageKey: 'error.not.found.supplier' },
        409: {
          when: 'An item with this name (case-insensitive) or sku exists',
          messageKey: 'error.duplicate.resource',
        },
      },
      request: { body: createItemBody },
      responses: { 201: itemResponse('Created') },
      handler: writeHandler(services, async (em, req, { body }) => {
        const { item, eventIds } = await createItem(em, body, writeContext(req));
        return {
          status: 201,
          body: item,
          headers: { Location: `/api/inventory/${item.id}`, ...etag(item) },
          eventIds,
        };
      }),
    },
    {
      method: 'get',
      path: '/api/inventory/:id',
      summary:
        'One item (ETag = version); with `asOf`, the item as it was then (authenticated only, also in demo mode)',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { params: itemIdParams, query: itemAsOfQuery },
      responses: {
        200: {
          description: 'Item (as of the instant when asked)',
          schema: Joi.alternatives(itemViewSchema, itemAsOfSchema),
        },
      },
      // One statement outside any unit of work: on the ORM's pool, without forking a request EntityManager.
      handler: async (req, res, { params, query }) => {
        if (query.asOf !== undefined) {
          // A point-in-time read is not a demo read: anonymous callers get 401 even in demo mode.
          if (!req.actor) throw new UnauthorizedError();
          return res.json(await itemAsOf(services.orm.em, params.id, query.asOf));
        }
        const item = await getItem(services.orm.em, params.id);
        res.set(etag(item)).json(item);
      },
    },
    {
      method: 'put',
      path: '/api/inventory/:id',
      summary: 'Replace an item (quantity change -> MANUAL_ADJUSTMENT, price change -> PRICE_CHANGE)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: { when: 'Another item has this name or sku', messageKey: 'error.duplicate.resource' },
        412: { when: 'If-Match names an older version', messageKey: 'inventory.item.stale' },
      },
      request: { params: itemIdParams, body: updateItemBody },
      mustExist: (em, params) => assertItemExists(em, params.id),
      responses: { 200: itemResponse('Updated') },
      handler: writeHandler(services, async (em, req, { params, body }) => {
        const { item, eventIds } = await updateItem(
          em,
          { ...body, id: params.id, expectedVersion: ifMatch(req) },
          writeContext(req),
        );
        return { status: 200, body: item, headers: etag(item), eventIds };
      }),
    },
    {
      method: 'delete',
      path: '/api/inventory/:id',
      summary: 'Delete an item with no stock left (deletion reason required)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: {
          when: 'Stock is left, or the item is still on an open order',
          messageKey: 'inventory.item.delete.stock.remaining',
        },
        412: { when: 'If-Match names an older version', messageKey: 'inventory.item.stale' },
      },
      request: { params: itemIdParams, query: deleteItemQuery },
      responses: { 204: { description: 'Deleted' } },
      handler: writeHandler(services, async (em, req, { params, query }) => {
        const { eventIds } = await deleteItem(
          em,
          { id: params.id, reason: query.reason, expectedVersion: ifMatch(req) },
          writeContext(req),
        );
        return { status: 204, eventIds };
      }),
    },
    {
      method: 'patch',
      path: '/api/inventory/:id/quantity',
      summary: 'Adjust the quantity atomically (never below 0)',
      tag: TAG,
      access: 'user',
      refusals: {
        412: {
          when: 'If-Match or expectedQuantity does not match the item',
          messageKey: 'inventory.item.stale',
        },
        422: {
          when: 'The quantity would fall below 0 or exceed the maximum (nothing is saved)',
          messageKey: 'inventory.item.quantity.negative',
        },
      },
      request: { params: itemIdParams, query: adjustQuantityQuery },
      responses: { 200: itemResponse('Adjusted') },
      // Prepared statements on the pool (or a native transaction with an Idempotency-Key): the hot write.
      handler: preparedWriteHandler(services, async (db, req, { params, query }) => {
        const { item, eventIds } = await adjustQuantity(
          db,
          {
            id: params.id,
            delta: query.delta,
            reason: query.reason,
            expectedQuantity: query.expectedQuantity,
            expectedVersion: ifMatch(req),
          },
          writeContext(req),
        );
        return { status: 200, body: item, headers: etag(item), eventIds };
      }),
    },
    {
      method: 'patch',
      path: '/api/inventory/:id/price',
      summary: 'Change the unit price (PRICE_CHANGE entry)',
      tag: TAG,
      access: 'user',
      refusals: {
        412: { when: 'If-Match names an older version', messageKey: 'inventory.item.stale' },
      },
      request: { params: itemIdParams, query: updatePriceQuery },
      responses: { 200: itemResponse('Price changed') },
      handler: writeHandler(services, async (em, req, { params, query }) => {
        const { item, eventIds } = await updatePrice(
          em,
          { id: params.id, price: query.price, expectedVersion: ifMatch(req) },
          writeContext(req),
        );
        return { status: 200, body: item, headers: etag(item), eventIds };
      }),
    },
    {
      method: 'patch',
      path: '/api/inventory/:id/name',
      summary: 'Rename an item',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: { when: 'Another item has this name', messageKey: 'error.duplicate.resource' },
        412: { when: 'If-Match names an older version', messageKey: 'inventory.item.stale' },
      },
      request: { params: itemIdParams, query: renameQuery },
      responses: { 200: itemResponse('Renamed') },
      handler: writeHandler(services, async (em, req, { params, query }) => {
        const item = await renameItem(em, { id: params.id, name: query.name, expectedVersion: ifMatch(req) });
        return { status: 200, body: item, headers: etag(item) };
      }),
    },
    {
      method: 'get',
      path: '/api/items',
      summary: 'Spring-style page of items',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: listItemsPageQuery },
      responses: { 200: { description: 'Page', schema: springPageSchema(itemViewSchema) } },
      handler: async (req, res, { query }) => res.json(await pageItems(req.em, query)),
    },
  ]);
