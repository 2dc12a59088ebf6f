import Joi from 'joi';
import type { Request } from 'express';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { writeContext, writeHandler } from '../routing/write-handler.js';
import { searchPageSchema } from '../presenters/page.js';
import { csvDelimiterQuery, csvResponse, sendCsvRows } from '../presenters/csv-response.js';
import { parseIfMatch } from '../../domain/inventory/item-errors.js';
import {
  listOrdersQuery,
  orderIdParams,
  purchaseOrderBody,
  purchaseOrderViewSchema,
  receiptBody,
  receiptIdParams,
  receiptViewSchema,
} from '../../domain/purchasing/purchasing.schemas.js';
import {
  assertOrderEditable,
  getPurchaseOrder,
  getReceipt,
  listPurchaseOrders,
  listReceipts,
  ORDER_CSV_COLUMNS,
  orderCsvRows,
} from '../../domain/purchasing/purchase-order-queries.js';
import type { PurchaseOrderView } from '../../domain/purchasing/purchase-order.view.js';
import { createPurchaseOrder } from '../../domain/purchasing/create-purchase-order.js';
import { updatePurchaseOrder } from '../../domain/purchasing/update-purchase-order.js';
import { placePurchaseOrder } from '../../domain/purchasing/place-purchase-order.js';
import { cancelPurchaseOrder } from '../../domain/purchasing/cancel-purchase-order.js';
import { receiveGoods } from '../../domain/purchasing/receive-goods.js';

const TAG = 'Purchasing';
const etag = (order: PurchaseOrderView) => ({ ETag: `"${order.version}"` });
const ifMatch = (req: Request) => parseIfMatch(req.get('if-match'));
const orderResponse = (description: string) => ({
  description,
  schema: purchaseOrderViewSchema,
  headers: { ETag: 'the order version' },
});
const orderPath = '/api/purchase-orders/:id';

/** The purchase order routes. */
export const purchasingRoutes = (services: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/purchase-orders',
      summary: 'Purchase orders (status repeatable, supplier, item), newest first (search page)',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: listOrdersQuery },
      responses: { 200: { description: 'Search page', schema: searchPageSchema(purchaseOrderViewSchema) } },
      handler: async (req, res, { query }) => res.json(await listPurchaseOrders(req.em, query)),
    },
    {
      method: 'post',
      path: '/api/purchase-orders',
      summary: 'A DRAFT order (a line without unitCost takes the item price)',
      tag: TAG,
      access: 'admin',
      refusals: {
        404: {
          when: 'The supplier or an item of a line does not exist',
          messageKey: 'error.not.found.supplier',
        },
        409: {
          when: 'An item of a line belongs to another supplier',
          messageKey: 'purchase.line.supplier.mismatch',
        },
      },
      request: { body: purchaseOrderBody },
      responses: { 201: orderResponse('Created (DRAFT)') },
      handler: writeHandler(services, async (em, req, { body }) => {
        const order = await createPurchaseOrder(em, body, writeContext(req));
        return {
          status: 201,
          body: order,
          headers: { Location: `/api/purchase-orders/${order.id}`, ...etag(order) },
        };
      }),
    },
    {
      method: 'get',
      path: orderPath,
      summary: 'One order (ETag = version)',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { params: orderIdParams },
      responses: { 200: orderResponse('Order') },
      handler: async (req, res, { params }) => {
        const order = await getPurchaseOrder(req.em, params.id);
        res.set(etag(order)).json(order);
      },
    },
    {
      method: 'put',
      path: orderPath,
      summary: 'Replace a DRAFT order (optional If-Match)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: {
          when: 'The order is not a DRAFT, or an item of a line belongs to another supplier',
          messageKey: 'purchase.order.status',
        },
        412: { when: 'If-Match names an older version', messageKey: 'purchase.order.stale' },
      },
      request: { params: orderIdParams, body: purchaseOrderBody },
      mustExist: (em, params, req) => assertOrderEditable(em, params.id, ifMatch(req)),
      responses: { 200: orderResponse('Updated') },
      handler: writeHandler(services, async (em, req, { params, body }) => {
        const order = await updatePurchaseOrder(em, {
          ...body,
          id: params.id,
          expectedVersion: ifMatch(req),
        });
        return { status: 200, body: order, headers: etag(order) };
      }),
    },
    {
      method: 'post',
      path: `${orderPath}/order`,
      summary: 'Place a DRAFT order (ORDERED; its lines count in the items onOrderQuantity)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: {
          when: 'The order is not a DRAFT, or an item of a line was deleted or moved to another supplier',
          messageKey: 'purchase.order.status',
        },
        412: { when: 'If-Match names an older version', messageKey: 'purchase.order.stale' },
      },
      request: { params: orderIdParams },
      responses: { 200: orderResponse('Ordered') },
      handler: writeHandler(services, async (em, req, { params }) => {
        const { order, eventIds } = await placePurchaseOrder(em, {
          id: params.id,
          expectedVersion: ifMatch(req),
          defaultLeadDays: services.config.replenishment.defaultLeadDays,
        });
        return { status: 200, body: order, headers: etag(order), eventIds };
      }),
    },
    {
      method: 'post',
      path: `${orderPath}/receipts`,
      summary: 'Receive goods on an ORDERED or PARTIALLY_RECEIVED order (RESTOCK entries at the line cost)',
      tag: TAG,
      access: 'user',
      refusals: {
        409: {
          when: 'The order is not open, or more is received than is still awaited',
          messageKey: 'purchase.receipt.over',
        },
        422: {
          when: "An item's quantity would exceed the maximum",
          messageKey: 'inventory.item.quantity.max',
        },
      },
      request: { params: orderIdParams, body: receiptBody },
      responses: {
        201: {
          description: 'Receipt',
          schema: receiptViewSchema,
          headers: { Location: 'the receipt' },
        },
      },
      handler: writeHandler(services, async (em, req, { params, body }) => {
        const { receipt, eventIds } = await receiveGoods(
          em,
          { id: params.id, lines: body.lines, note: body.note },
          writeContext(req),
        );
        return {
          status: 201,
          body: receipt,
          headers: { Location: `/api/purchase-orders/${params.id}/receipts/${receipt.id}` },
          eventIds,
        };
      }),
    },
    {
      method: 'post',
      path: `${orderPath}/cancel`,
      summary: 'Cancel an open order (what was still to come leaves onOrderQuantity)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: { when: 'The order is no longer open', messageKey: 'purchase.order.status' },
        412: { when: 'If-Match names an older version', messageKey: 'purchase.order.stale' },
      },
      request: { params: orderIdParams },
      responses: { 200: orderResponse('Cancelled') },
      handler: writeHandler(services, async (em, req, { params }) => {
        const { order, eventIds } = await cancelPurchaseOrder(em, {
          id: params.id,
          expectedVersion: ifMatch(req),
        });
        return { status: 200, body: order, headers: etag(order), eventIds };
      }),
    },
    {
      method: 'get',
      path: `${orderPath}/export.csv`,
      summary: 'The order as CSV for the supplier, one row per line',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { params: orderIdParams, query: Joi.object({ ...csvDelimiterQuery }) },
      responses: { 200: csvResponse('Order lines (RFC 4180, UTF-8 with BOM, header row)') },
      handler: async (req, res, { params, query }) => {
        const order = await getPurchaseOrder(req.em, params.id);
        sendCsvRows(res, orderCsvRows(order), {
          columns: ORDER_CSV_COLUMNS,
          baseName: order.number,
          delimiter: query.delimiter,
        });
      },
    },
    {
      method: 'get',
      path: `${orderPath}/receipts`,
      summary: 'The receipts of an order, oldest first',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { params: orderIdParams },
      responses: { 200: { description: 'Receipts', schema: Joi.array().items(receiptViewSchema) } },
      handler: async (req, res, { params }) => res.json(await listReceipts(req.em, params.id)),
    },
    {
      method: 'get',
      path: `${orderPath}/receipts/:receiptId`,
      summary: 'One receipt of an order',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { params: receiptIdParams },
      responses: { 200: { description: 'Receipt', schema: receiptViewSchema } },
      handler: async (req, res, { params }) =>
        res.json(await getReceipt(req.em, params.id, params.receiptId)),
    },
  ]);
