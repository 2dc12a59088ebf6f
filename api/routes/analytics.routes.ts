import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes, type RouteDefinition } from '../routing/route-definition.js';
import * as s from '../../domain/analytics/analytics.schemas.js';
import { dayRange, dayRangeOrDefault, timeRange } from '../../domain/analytics/date-params.js';
import {
  MAX_STOCK_VALUE_DAYS,
  stockValueOverTime,
} from '../../domain/analytics/queries/stock-value-over-time.js';
import { stockPerSupplier } from '../../domain/analytics/queries/stock-per-supplier.js';
import { lowStockCount } from '../../domain/analytics/queries/low-stock-count.js';
import { itemUpdateFrequency } from '../../domain/analytics/queries/item-update-frequency.js';
import { lowStockItems } from '../../domain/analytics/queries/low-stock-items.js';
import { monthlyStockMovement } from '../../domain/analytics/queries/monthly-stock-movement.js';
import { stockUpdates } from '../../domain/analytics/queries/stock-updates.js';
import { dashboardSummary } from '../../domain/analytics/queries/dashboard-summary.js';
import { priceTrend } from '../../domain/analytics/queries/price-trend.js';
import { financialSummary } from '../../domain/analytics/queries/financial-summary.js';
import { reasonBreakdown } from '../../domain/analytics/queries/reason-breakdown.js';
import { changesByEmployee } from '../../domain/analytics/queries/changes-by-employee.js';
import { EMPLOYEE_CHANGES_SORT, employeeChanges } from '../../domain/analytics/queries/employee-changes.js';
import { parsePageRequest } from '../../domain/shared/paging.js';

const int = Joi.number().integer();
const money = Joi.number();
const supplierStock = Joi.object({
  supplierId: Joi.string().required(),
  supplierName: Joi.string().required(),
  totalQuantity: int.required(),
  totalValue: money.required(),
});
const lowStockItem = Joi.object({
  itemId: Joi.string().required(),
  itemName: Joi.string().required(),
  quantity: int.required(),
  minimumQuantity: int.required(),
  recommendedQuantity: int.required(),
});
const movement = Joi.object({
  month: Joi.string().required(),
  stockIn: int.required(),
  stockOut: int.required(),
});
const updateCount = Joi.object({
  itemId: Joi.string().required(),
  itemName: Joi.string().required(),
  updateCount: int.required(),
});
const stockUpdate = Joi.object({
  itemId: Joi.string().required(),
  itemName: Joi.string().required(),
  supplierName: Joi.string().allow(null).required(),
  change: int.required(),
  reason: Joi.string().required(),
  createdBy: Joi.string().required(),
  timestamp: Joi.string().isoDate().required(),
});
const sortOrder = Joi.object({ property: Joi.string().required(), direction: Joi.string().required() });
const springPageOf = (item: Joi.Schema) =>
  Joi.object({
    content: Joi.array().items(item).required(),
    pageable: Joi.object({
      pageNumber: int.required(),
      pageSize: int.required(),
      sort: Joi.array().items(sortOrder).required(),
    }).required(),
    totalElements: int.required(),
    totalPages: int.required(),
    last: Joi.boolean().required(),
    first: Joi.boolean().required(),
    number: int.required(),
    size: int.required(),
    numberOfElements: int.required(),
    empty: Joi.boolean().required(),
  });
const financial = Joi.object({
  totalInventoryValue: money.required(),
  totalQuantity: int.required(),
  weightedAverageCost: Joi.number().required(),
  totalCost: money.required(),
  period: Joi.object({ from: Joi.string().required(), to: Joi.string().required() }).required(),
  method: Joi.string().valid('WAC').required(),
  fromDate: Joi.string().required(),
  toDate: Joi.string().required(),
  openingQty: int.required(),
  openingValue: money.required(),
  purchasesQty: int.required(),
  purchasesCost: money.required(),
  returnsInQty: int.required(),
  returnsInCost: money.required(),
  cogsQty: int.required(),
  cogsCost: money.required(),
  writeOffQty: int.required(),
  writeOffCost: money.required(),
  endingQty: int.required(),
  endingValue: money.required(),
});

const ok = (description: string, schema: Joi.Schema) => ({ 200: { description, schema } });
const TAG = 'Analytics';

/** The analytics reads and the reason and employee reads. Reads are for any signed-in user and public in demo mode (changes by employee and an employee's changes stay ADMIN-only for signed-in callers), except the stock updates query. */
export const analyticsRoutes = (_services: Services): RouteDefinition[] =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/analytics/stock-value',
      summary: 'Total stock value at the end of each day in the range',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.rangeQuery },
      responses: ok(
        'One point per day',
        Joi.array().items(Joi.object({ date: Joi.string().required(), totalValue: money.required() })),
      ),
      handler: async (req, res, { query }) =>
        res.json(
          await stockValueOverTime(
            req.em,
            dayRange(query.start, query.end, ['start', 'end'], MAX_STOCK_VALUE_DAYS),
            query.supplierId ?? null,
          ),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/stock-per-supplier',
      summary: 'Current quantity and value per supplier',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      responses: ok('By total quantity desc', Joi.array().items(supplierStock)),
      handler: async (req, res) => res.json(await stockPerSupplier(req.em)),
    },
    {
      method: 'get',
      path: '/api/analytics/low-stock/count',
      summary: 'Number of items below their minimum quantity',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      responses: ok('A bare integer', Joi.number().integer()),
      handler: async (req, res) => res.json(await lowStockCount(req.em)),
    },
    {
      method: 'get',
      path: '/api/analytics/item-update-frequency',
      summary: 'History entries per item of a supplier',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.supplierRequiredQuery },
      responses: ok('By update count desc', Joi.array().items(updateCount)),
      handler: async (req, res, { query }) =>
        res.json(await itemUpdateFrequency(req.em, { supplierId: query.supplierId })),
    },
    {
      method: 'get',
      path: '/api/analytics/low-stock-items',
      summary: 'Items of a supplier below their minimum, with the quantity to order',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.supplierRequiredQuery },
      responses: ok('By quantity asc', Joi.array().items(lowStockItem)),
      handler: async (req, res, { query }) => res.json(await lowStockItems(req.em, query.supplierId)),
    },
    {
      method: 'get',
      path: '/api/analytics/monthly-stock-movement',
      summary: 'Stock in and out per month',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.rangeQuery },
      responses: ok('Months with entries, ascending', Joi.array().items(movement)),
      handler: async (req, res, { query }) =>
        res.json(
          await monthlyStockMovement(
            req.em,
            dayRange(query.start, query.end, ['start', 'end']),
            query.supplierId ?? null,
          ),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/stock-updates',
      summary: 'Filtered stock changes, newest first, at most 1000',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.stockUpdatesQuery },
      responses: ok('Newest first', Joi.array().items(stockUpdate)),
      handler: async (req, res, { query }) =>
        res.json(
          await stockUpdates(req.em, {
            ...timeRange(query.startDate, query.endDate, ['startDate', 'endDate']),
            ...query,
          }),
        ),
    },
    {
      method: 'post',
      path: '/api/analytics/stock-updates/query',
      changesNoRows: true,
      summary: 'Filtered stock changes with the filter as a JSON body; a read, allowed in demo mode',
      tag: TAG,
      access: 'auth',
      allowedInDemo: true,
      request: { body: s.stockUpdatesBody },
      responses: ok('Newest first', Joi.array().items(stockUpdate)),
      handler: async (req, res, { body }) =>
        res.json(
          await stockUpdates(req.em, {
            ...timeRange(body.startDate, body.endDate, ['startDate', 'endDate']),
            ...body,
          }),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/summary',
      summary: 'Dashboard summary; dates or date-times, default the last 30 days',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.summaryQuery },
      responses: ok(
        'Summary',
        Joi.object({
          stockPerSupplier: Joi.array().items(supplierStock).required(),
          lowStockItems: Joi.array().items(lowStockItem).required(),
          monthlyStockMovement: Joi.array().items(movement).required(),
          topUpdatedItems: Joi.array().items(updateCount).required(),
        }),
      ),
      handler: async (req, res, { query }) =>
        res.json(
          await dashboardSummary(
            req.em,
            dayRangeOrDefault(query.startDate, query.endDate, ['startDate', 'endDate']),
            query.supplierId ?? null,
          ),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/price-trend',
      summary: 'Daily average unit price of an item',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.priceTrendQuery },
      responses: ok(
        'Days with entries',
        Joi.array().items(Joi.object({ timestamp: Joi.string().required(), price: money.required() })),
      ),
      handler: async (req, res, { query }) =>
        res.json(
          await priceTrend(
            req.em,
            query.itemId,
            dayRange(query.start, query.end, ['start', 'end']),
            query.supplierId ?? null,
          ),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/financial/summary',
      summary: 'Weighted-average-cost financial summary',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.financialQuery },
      responses: ok('Summary', financial),
      handler: async (req, res, { query }) =>
        res.json(
          await financialSummary(
            req.em,
            dayRange(query.from, query.to, ['from', 'to']),
            query.supplierId ?? null,
          ),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/reason-breakdown',
      summary: 'Increase and decrease per reason; default the last 30 days',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: s.reasonBreakdownQuery },
      responses: ok(
        'Reasons with entries',
        Joi.array().items(
          Joi.object({ reason: Joi.string().required(), increase: int.required(), decrease: int.required() }),
        ),
      ),
      handler: async (req, res, { query }) =>
        res.json(
          await reasonBreakdown(
            req.em,
            dayRangeOrDefault(query.startDate, query.endDate, ['startDate', 'endDate']),
            {
              supplierId: query.supplierId ?? null,
              itemName: query.itemName ?? null,
            },
          ),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/by-employee',
      summary: 'Changes per user and period (ADMIN; anonymous in demo mode); default the last 30 days',
      tag: TAG,
      access: 'admin',
      demoRead: true,
      request: { query: s.byEmployeeQuery },
      responses: ok(
        'Per period and user',
        Joi.array().items(
          Joi.object({
            period: Joi.string().required(),
            createdBy: Joi.string().required(),
            displayName: Joi.string().required(),
            changeCount: int.required(),
          }),
        ),
      ),
      handler: async (req, res, { query }) =>
        res.json(
          await changesByEmployee(
            req.em,
            query.granularity,
            dayRangeOrDefault(query.startDate, query.endDate, ['startDate', 'endDate']),
            query.supplierId ?? null,
          ),
        ),
    },
    {
      method: 'get',
      path: '/api/analytics/employee-changes',
      summary: "A user's changes as a Spring-style page (ADMIN; anonymous in demo mode)",
      tag: TAG,
      access: 'admin',
      demoRead: true,
      request: { query: s.employeeChangesQuery },
      responses: ok('Page of changes', springPageOf(stockUpdate)),
      handler: async (req, res, { query }) => {
        const page = parsePageRequest(query, { maxSize: 100, defaultSize: 25, ...EMPLOYEE_CHANGES_SORT });
        const range = timeRange(query.startDate, query.endDate, ['startDate', 'endDate']);
        res.json(
          await employeeChanges(
            req.em,
            { ...range, createdBy: query.createdBy, supplierId: query.supplierId },
            page,
          ),
        );
      },
    },
  ]);
