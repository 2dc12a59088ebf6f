import Joi from 'joi';
import { integer } from '../shared/joi-extras.js';
import { dateParam, uuidParam } from '../analytics/analytics.schemas.js';
import { ITEM_VIEW_FIELDS } from './inventory.schemas.js';

/** GET /api/inventory/changes query: an opaque cursor and a page bound. */
export const itemChangesQuery = Joi.object({
  since: Joi.string().max(200).messages({ 'string.base': 'inventory.changes.cursor.invalid' }),
  limit: integer().min(1).max(1000).default(100).messages({
    'number.min': 'inventory.changes.limit.range',
    'number.max': 'inventory.changes.limit.range',
    'number.base': 'inventory.changes.limit.range',
    'number.integer': 'inventory.changes.limit.range',
  }),
});

export const itemChangesSchema = Joi.object({
  changes: Joi.array()
    .items(
      Joi.object({
        itemId: Joi.string().required(),
        kind: Joi.string().valid('created', 'updated', 'deleted').required(),
        version: Joi.number().integer().required(),
        at: Joi.string().isoDate().required(),
      }),
    )
    .required(),
  next: Joi.string().required(),
});

/** The point in time of an `asOf` read: a date-time (or date) within the supported dates; the future is refused. */
const asOf = dateParam.messages({ 'any.required': 'inventory.asof.required' });

/** GET /api/inventory/{id} query: `asOf` turns the read into a point-in-time read. */
export const itemAsOfQuery = Joi.object({ asOf });

/** GET /api/inventory/value query. */
export const inventoryValueQuery = Joi.object({ asOf: asOf.required(), supplierId: uuidParam });

/** The item view's fields without what only the present has, and the instant. */
const {
  onOrderQuantity: _onOrder,
  createdBy: _by,
  createdAt: _at,
  updatedAt: _updated,
  ...ITEM_STATE_FIELDS
} = ITEM_VIEW_FIELDS;

export const itemAsOfSchema = Joi.object({
  ...ITEM_STATE_FIELDS,
  supplierName: Joi.string().allow(null).required(),
  asOf: Joi.string().isoDate().required(),
});

export const inventoryValueSchema = Joi.object({
  asOf: Joi.string().isoDate().required(),
  totalValue: Joi.number().required(),
  totalQuantity: Joi.number().integer().required(),
  items: Joi.number().integer().required(),
});
