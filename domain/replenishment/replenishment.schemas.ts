import Joi from 'joi';
import { integer, pagingQuery } from '../shared/joi-extras.js';

/** The suggestions query: the filters and the page (no `sort`: the order is the contract's). */
export const suggestionsQuery = Joi.object({
  supplierId: Joi.string().trim().max(64),
  dueWithinDays: integer().min(1).max(365),
  page: pagingQuery.page,
  size: pagingQuery.size,
});

/** The draft orders from suggestions body: one supplier's suggestions, or every supplier's. */
export const draftOrdersBody = Joi.object({ supplierId: Joi.string().trim().min(1).max(64) });

const date = Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/);

export const suggestionViewSchema = Joi.object({
  itemId: Joi.string().required(),
  itemName: Joi.string().required(),
  sku: Joi.string().allow(null).required(),
  supplierId: Joi.string().required(),
  supplierName: Joi.string().required(),
  quantity: Joi.number().integer().required(),
  onOrderQuantity: Joi.number().integer().required(),
  inventoryPosition: Joi.number().integer().required(),
  minimumQuantity: Joi.number().integer().required(),
  dailyDemand: Joi.number().required(),
  demandStdDev: Joi.number().required(),
  leadTimeDays: Joi.number().integer().required(),
  serviceLevel: Joi.number().required(),
  reorderPoint: Joi.number().integer().required(),
  orderUpToQuantity: Joi.number().integer().required(),
  suggestedQuantity: Joi.number().integer().min(1).required(),
  daysOfCover: Joi.number().integer().allow(null).required(),
  projectedStockoutDate: date.allow(null).required(),
  orderByDate: date.allow(null).required(),
  unitCost: Joi.number().required(),
  suggestedCost: Joi.number().required(),
});

export const runStatusSchema = Joi.object({
  jobId: Joi.string().required(),
  state: Joi.string().required(),
  progress: Joi.number().min(0).max(100).required(),
  startedAt: Joi.string().isoDate().allow(null).required(),
  finishedAt: Joi.string().isoDate().allow(null).required(),
  result: Joi.object({
    items: Joi.number().integer(),
    suggestions: Joi.number().integer(),
    error: Joi.string(),
  })
    .allow(null)
    .required(),
});
