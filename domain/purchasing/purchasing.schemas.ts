import Joi from 'joi';
import { integer, moneySchema, pagingQuery } from '../shared/joi-extras.js';
import { MAX_ITEM_QUANTITY } from '../inventory/inventory.schemas.js';
import { ORDER_STATUSES } from './purchase-order.entity.js';

/** Lines per order and per receipt (contract: 1..500). */
export const MAX_ORDER_LINES = 500;

const itemId = Joi.string().trim().min(1).max(64).required().messages({
  'any.required': 'purchase.line.item.required',
  'string.empty': 'purchase.line.item.required',
});

const orderLine = Joi.object({
  itemId,
  quantity: integer().min(1).max(MAX_ITEM_QUANTITY).required().messages({
    'number.min': 'purchase.line.quantity.range',
    'number.max': 'purchase.line.quantity.range',
    'any.required': 'purchase.line.quantity.range',
  }),
  unitCost: moneySchema({
    min: 'purchase.line.cost.min',
    max: 'purchase.line.cost.max',
    precision: 'purchase.line.cost.precision',
    required: 'purchase.line.cost.min',
  }),
});

const note = Joi.string()
  .trim()
  .max(500)
  .allow('', null)
  .messages({ 'string.max': 'purchase.note.too.long' });

/**
 * Order creation and the order update body. Two lines for one item are a 400 (`unique` on itemId); the total cap is checked by the use
 * case once every line's cost is known.
 */
export const purchaseOrderBody = Joi.object({
  supplierId: Joi.string().trim().min(1).max(64).required().messages({
    'any.required': 'purchase.supplier.required',
    'string.empty': 'purchase.supplier.required',
  }),
  lines: Joi.array().items(orderLine).min(1).max(MAX_ORDER_LINES).unique('itemId').required().messages({
    'array.min': 'purchase.lines.count',
    'array.max': 'purchase.lines.count',
    'any.required': 'purchase.lines.count',
    'array.unique': 'purchase.line.duplicate',
  }),
  note,
  expectedAt: Joi.date()
    .iso()
    .allow(null)
    .messages({ 'date.base': 'purchase.expected.invalid', 'date.format': 'purchase.expected.invalid' }),
});

/** A receipt body. */
export const receiptBody = Joi.object({
  lines: Joi.array()
    .items(
      Joi.object({
        itemId,
        quantity: integer().min(1).max(MAX_ITEM_QUANTITY).required().messages({
          'number.min': 'purchase.receipt.quantity.min',
          'number.max': 'purchase.receipt.quantity.min',
          'any.required': 'purchase.receipt.quantity.min',
        }),
      }),
    )
    .min(1)
    .max(MAX_ORDER_LINES)
    .unique('itemId')
    .required()
    .messages({
      'array.min': 'purchase.receipt.lines.count',
      'array.max': 'purchase.receipt.lines.count',
      'any.required': 'purchase.receipt.lines.count',
      'array.unique': 'purchase.line.duplicate',
    }),
  note,
});

export const orderIdParams = Joi.object({ id: Joi.string().max(64).required() });
export const receiptIdParams = Joi.object({
  id: Joi.string().max(64).required(),
  receiptId: Joi.string().max(64).required(),
});

/** The order search query. */
export const listOrdersQuery = Joi.object({
  status: Joi.alternatives(
    Joi.string().valid(...ORDER_STATUSES),
    Joi.array().items(Joi.string().valid(...ORDER_STATUSES)),
  ).messages({ 'any.only': 'purchase.status.invalid', 'alternatives.match': 'purchase.status.invalid' }),
  supplierId: Joi.string().max(64),
  itemId: Joi.string().max(64),
  ...pagingQuery,
});

const orderLineView = Joi.object({
  itemId: Joi.string().required(),
  itemName: Joi.string().required(),
  sku: Joi.string().allow(null).required(),
  quantityOrdered: Joi.number().integer().required(),
  quantityReceived: Joi.number().integer().required(),
  unitCost: Joi.number().required(),
  lineTotal: Joi.number().required(),
});

export const purchaseOrderViewSchema = Joi.object({
  id: Joi.string().required(),
  number: Joi.string().required(),
  supplierId: Joi.string().required(),
  supplierName: Joi.string().required(),
  status: Joi.string()
    .valid(...ORDER_STATUSES)
    .required(),
  lines: Joi.array().items(orderLineView).required(),
  totalCost: Joi.number().required(),
  note: Joi.string().allow(null).required(),
  expectedAt: Joi.string().allow(null).required(),
  createdBy: Joi.string().required(),
  createdAt: Joi.string().isoDate().required(),
  orderedAt: Joi.string().isoDate().allow(null).required(),
  receivedAt: Joi.string().isoDate().allow(null).required(),
  cancelledAt: Joi.string().isoDate().allow(null).required(),
  version: Joi.number().integer().required(),
});

export const receiptViewSchema = Joi.object({
  id: Joi.string().required(),
  purchaseOrderId: Joi.string().required(),
  lines: Joi.array()
    .items(
      Joi.object({
        itemId: Joi.string().required(),
        quantity: Joi.number().integer().required(),
        entryId: Joi.string().required(),
      }),
    )
    .required(),
  note: Joi.string().allow(null).required(),
  receivedBy: Joi.string().required(),
  receivedAt: Joi.string().isoDate().required(),
});
