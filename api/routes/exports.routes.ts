import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import {
  csvCopyOut,
  csvDelimiterQuery,
  csvResponse,
  sendCopyCsv,
  sendCsv,
} from '../presenters/csv-response.js';
import { streamOwner } from '../presenters/stream-response.js';
import { itemExportQuery } from '../../domain/inventory/item-queries.js';
import { toItemView } from '../../domain/inventory/item.view.js';
import { ITEM_CSV_COLUMNS } from '../../domain/inventory/item-csv.js';
import { historyExportRows } from '../../domain/stock-history/stock-history-queries.js';
import { HISTORY_CSV_COPY_COLUMNS } from '../../domain/stock-history/history-csv.js';
import { productListQuery } from '../../domain/catalog/product-queries.js';
import { toProductView } from '../../domain/catalog/product.view.js';
import { PRODUCT_CSV_COLUMNS } from '../../domain/catalog/product-csv.js';
import { historyDate, historyReasonParams } from '../../domain/stock-history/stock-history.schemas.js';

/**
 * CSV downloads streamed from a cursor, or for the history from COPY (constant memory at any size; a client
 * that goes away stops the query). Each mirrors the access rules of the read it exports. Mounted before the `/:id` routes.
 */
export const exportRoutes = ({ rows }: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/inventory/export.csv',
      summary: 'Items as CSV, with the filters of the item search (name, supplierId, belowMinimumOnly)',
      tag: 'Inventory',
      access: 'auth',
      demoRead: true,
      stream: 'counted',
      request: {
        query: Joi.object({
          name: Joi.string().allow('').max(255),
          supplierId: Joi.string().allow('').max(64),
          belowMinimumOnly: Joi.boolean(),
          ...csvDelimiterQuery,
        }),
      },
      responses: { 200: csvResponse('Items (RFC 4180, UTF-8 with BOM, header row)') },
      handler: async (req, res, { query }) =>
        sendCsv(req, res, await rows.open(itemExportQuery(query), toItemView, streamOwner(req, res)), {
          columns: ITEM_CSV_COLUMNS,
          baseName: 'inventory',
          delimiter: query.delimiter,
        }),
    },
    {
      method: 'get',
      path: '/api/stock-history/export.csv',
      summary: 'Stock history as CSV, oldest first, with the history search filters',
      tag: 'Stock history',
      access: 'auth',
      stream: 'counted',
      request: {
        query: Joi.object({
          startDate: historyDate,
          endDate: historyDate,
          itemName: Joi.string().allow('').max(255),
          supplierId: Joi.string().allow('').max(64),
          itemId: Joi.string().allow('').max(64),
          reason: historyReasonParams.extract('reason').optional(),
          createdBy: Joi.string().allow('').max(255),
          ...csvDelimiterQuery,
        }),
      },
      responses: { 200: csvResponse('History entries (RFC 4180, UTF-8 with BOM, header row)') },
      // Written by PostgreSQL (COPY): the history is the one export that reaches millions of rows.
      handler: async (req, res, { query }) => {
        const { delimiter, ...filters } = query;
        const copy = csvCopyOut(HISTORY_CSV_COPY_COLUMNS, historyExportRows(filters), delimiter);
        await sendCopyCsv(req, res, await rows.copyOut(copy, streamOwner(req, res)), {
          baseName: 'stock-history',
        });
      },
    },
    {
      method: 'get',
      path: '/api/products/export.csv',
      summary: 'Products as CSV, by id',
      tag: 'Products',
      access: 'user',
      errorStyle: 'product',
      stream: 'counted',
      request: { query: Joi.object({ ...csvDelimiterQuery }) },
      responses: { 200: csvResponse('Products (RFC 4180, UTF-8 with BOM, header row)') },
      handler: async (req, res, { query }) =>
        sendCsv(req, res, await rows.open(productListQuery(), toProductView, streamOwner(req, res)), {
          columns: PRODUCT_CSV_COLUMNS,
          baseName: 'products',
          delimiter: query.delimiter,
        }),
    },
  ]);
