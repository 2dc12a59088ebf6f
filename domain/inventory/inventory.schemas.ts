import Joi from 'joi';
import { integer, moneySchema, pagingQuery } from '../shared/joi-extras.js';
import { ADJUST_REASONS, REASON_ALIASES } from './reasons.js';

const name = Joi.string().trim().min(1).max(255).messages({
  'any.required': 'inventory.item.name.required',
  'string.empty': 'inventory.item.name.required',
  'string.min': 'inventory.item.name.required',
  'string.max': 'inventory.item.name.too.long',
  'string.base': 'inventory.item.name.required',
});

const price = moneySchema({
  min: 'inventory.item.price.min',
  max: 'inventory.item.price.max',
  precision: 'inventory.item.price.precision',
  required: 'inventory.item.price.required',
});

/** The largest quantity (and minimum quantity) an item may have (contract: 0..999999). */
export const MAX_ITEM_QUANTITY = 999999;

/** An own replenishment level: 0..999999 or null. */
const orderLevel = (message: string) =>
  integer().min(0).max(MAX_ITEM_QUANTITY).allow(null).messages({
    'number.min': message,
    'number.max': message,
    'number.base': message,
    'number.integer': message,
  });

const itemFields = {
  name: name.required(),
  quantity: integer().min(0).max(MAX_ITEM_QUANTITY).required().messages({
    'number.min': 'inventory.item.quantity.min',
    'number.max': 'inventory.item.quantity.max',
    'any.required': 'inventory.item.quantity.required',
  }),
  price: price.required(),
  supplierId: Joi.string().trim().min(1).max(64).required().messages({
    'any.required': 'inventory.item.supplier.required',
    'string.empty': 'inventory.item.supplier.required',
  }),
  minimumQuantity: integer().min(0).max(MAX_ITEM_QUANTITY).default(0).messages({
    'number.min': 'inventory.item.minimum.min',
  }),
  sku: Joi.string().trim().max(64).allow('', null).messages({ 'string.max': 'inventory.item.sku.too.long' }),
  // Absent: keep the stored value (create: none); null: reset to computed (contract purchasing-api.md).
  reorderPoint: orderLevel('inventory.item.reorder.point.range'),
  orderUpToQuantity: orderLevel('inventory.item.order.up.to.range'),
};

/** Item creation body. `id` must be absent; `createdBy` and other unknown properties are ignored. */
export const createItemBody = Joi.object({
  ...itemFields,
  id: Joi.any().forbidden().messages({ 'any.unknown': 'error.id.not.allowed' }),
});

/** The item update (PUT) body: all required fields; a body id is ignored (the path id wins). */
export const updateItemBody = Joi.object({ ...itemFields, id: Joi.any().strip() });

export const itemIdParams = Joi.object({ id: Joi.string().max(64).required() });

/** Reasons accepted by adjust quantity (plus the reference client's aliases). */
export const ADJUST_REASON_INPUTS = [...ADJUST_REASONS, ...Object.keys(REASON_ALIASES)];

/** The quantity adjustment query. */
export const adjustQuantityQuery = Joi.object({
  delta: integer().min(-2147483648).max(2147483647).invalid(0).required().messages({
    'any.invalid': 'inventory.adjust.delta.zero',
    'any.required': 'inventory.adjust.delta.required',
  }),
  reason: Joi.string()
    .valid(...ADJUST_REASON_INPUTS)
    .required()
    .messages({
      'any.only': 'inventory.adjust.reason.invalid',
      'any.required': 'inventory.adjust.reason.invalid',
    }),
  expectedQuantity: integer().min(0),
});

/** The price change query. */
export const updatePriceQuery = Joi.object({ price: price.required() });

/** The rename query. */
export const renameQuery = Joi.object({ name: name.required() });

/** Item deletion query: the reason is checked by the use case, after 404 and 409 (order). */
export const deleteItemQuery = Joi.object({ reason: Joi.string().allow('').max(100) });

/** The item search query. */
export const searchItemsQuery = Joi.object({
  name: Joi.string().allow('').max(255).required(),
  supplierId: Joi.string().allow('').max(64),
  belowMinimumOnly: Joi.boolean(),
  ...pagingQuery,
});

/** The items page (GET /api/items) query. */
export const listItemsPageQuery = Joi.object({ ...pagingQuery });

/** The fields of the InventoryItem record (the as-of read shows the state part of them: ledger.schemas.ts). */
export const ITEM_VIEW_FIELDS = {
  id: Joi.string().required(),
  name: Joi.string().required(),
  sku: Joi.string().allow(null).required(),
  quantity: Joi.number().integer().required(),
  price: Joi.number().required(),
  totalValue: Joi.number().required(),
  supplierId: Joi.string().required(),
  supplierName: Joi.string().required(),
  minimumQuantity: Joi.number().integer().required(),
  onOrderQuantity: Joi.number().integer().required(),
  reorderPoint: Joi.number().integer().allow(null).required(),
  orderUpToQuantity: Joi.number().integer().allow(null).required(),
  createdBy: Joi.string().required(),
  createdAt: Joi.string().isoDate().required(),
  updatedAt: Joi.string().isoDate().required(),
  version: Joi.number().integer().required(),
};

export const itemViewSchema = Joi.object(ITEM_VIEW_FIELDS);
