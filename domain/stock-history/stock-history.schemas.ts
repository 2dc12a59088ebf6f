import Joi from 'joi';
import { pagingQuery } from '../shared/joi-extras.js';
import { isCalendarDate, isSupportedInstant, SUPPORTED_DATES } from '../analytics/date-params.js';
import { ALL_REASONS, REASON_ALIASES } from '../inventory/reasons.js';

/** `cursor`: the opaque position a page's `Link: <...>; rel="next"` header hands to the next request. */
const pagedHistoryQuery = {
  ...pagingQuery,
  cursor: Joi.string()
    .max(16384)
    .description(
      'Opaque cursor from the previous page\'s `Link: <...>; rel="next"` header (not with `page`; the same filters, sort and size): the walk sees the entries visible at its first page, none skipped or repeated, totals frozen.',
    ),
};

/** The history reads: a plain array (streamed) unless `size` is present. */
export const listHistoryQuery = Joi.object(pagedHistoryQuery);

export const historyItemParams = Joi.object({ itemId: Joi.string().max(64).required() });

export const historyReasonParams = Joi.object({
  reason: Joi.string()
    .valid(...ALL_REASONS, ...Object.keys(REASON_ALIASES))
    .required()
    .messages({ 'any.only': 'history.reason.invalid' }),
});

/**
 * An ISO-8601 date or date-time that exists on the calendar (isCalendarDate) within the supported range
 * (contract, Analytics): The history search and the history export.
 */
export const historyDate = Joi.date()
  .iso()
  .custom((value: Date, helpers) => {
    if (typeof helpers.original === 'string' && !isCalendarDate(helpers.original))
      return helpers.error('date.calendar');
    return isSupportedInstant(value) ? value : helpers.error('date.range', SUPPORTED_DATES);
  })
  .messages({ 'date.range': 'error.date.range', 'date.calendar': 'error.date.calendar' });

/** The history search query. */
export const searchHistoryQuery = Joi.object({
  startDate: historyDate,
  endDate: historyDate,
  itemName: Joi.string().allow('').max(255),
  supplierId: Joi.string().allow('').max(64),
  ...pagedHistoryQuery,
});

export const historyViewSchema = Joi.object({
  id: Joi.string().required(),
  itemId: Joi.string().required(),
  itemName: Joi.string().required(),
  supplierId: Joi.string().allow(null).required(),
  supplierName: Joi.string().allow(null).required(),
  change: Joi.number().integer().required(),
  quantityBefore: Joi.number().integer().required(),
  quantityAfter: Joi.number().integer().required(),
  reason: Joi.string().required(),
  priceAtChange: Joi.number().required(),
  createdBy: Joi.string().required(),
  timestamp: Joi.string().isoDate().required(),
  reversalOf: Joi.string().allow(null).required(),
  reversedBy: Joi.string().allow(null).required(),
  unitCost: Joi.number().allow(null).required(),
  purchaseOrderId: Joi.string().allow(null).required(),
  note: Joi.string().allow(null).required(),
});

export const historyEntryParams = Joi.object({ id: Joi.string().max(64).required() });

/** POST /api/stock-history/{id}/reverse body, optional (a request without a body reverses without a note). */
export const reverseEntryBody = Joi.alternatives().try(
  Joi.object({
    note: Joi.string()
      .trim()
      .max(500)
      .allow('', null)
      .messages({ 'string.max': 'stock.history.note.too.long' }),
  }),
);
