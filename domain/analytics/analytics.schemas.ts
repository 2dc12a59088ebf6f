import Joi from 'joi';
import { integer } from '../shared/joi-extras.js';
import {
  isCalendarDate,
  isSupportedInstant,
  isValidDateParam,
  parseDateParam,
  SUPPORTED_DATES,
} from './date-params.js';

const MISSING = { 'any.required': 'analytics.parameter.missing' };

/** A `yyyy-MM-dd` date or an ISO-8601 date-time within SUPPORTED_DATES; '' counts as absent. */
export const dateParam = Joi.string()
  .trim()
  .empty('')
  .max(40)
  .custom((value: string, helpers) => {
    if (!isValidDateParam(value)) return helpers.error('any.invalid');
    if (!isCalendarDate(value)) return helpers.error('date.calendar');
    if (!isSupportedInstant(parseDateParam(value).at)) return helpers.error('date.range', SUPPORTED_DATES);
    return value;
  })
  .messages({
    'any.invalid': 'analytics.date.invalid',
    'date.calendar': 'error.date.calendar',
    'date.range': 'error.date.range',
    ...MISSING,
  });

export const uuidParam = Joi.string().trim().empty('').guid().messages(MISSING);
export const requiredDate = dateParam.required().messages(MISSING);
export const requiredUuid = uuidParam.required().messages(MISSING);
const text = Joi.string().trim().empty('').max(255);
const change = integer().min(-2147483648).max(2147483647);

export const rangeQuery = Joi.object({ start: requiredDate, end: requiredDate, supplierId: uuidParam });
export const supplierRequiredQuery = Joi.object({ supplierId: requiredUuid });
export const financialQuery = Joi.object({ from: requiredDate, to: requiredDate, supplierId: uuidParam });
export const priceTrendQuery = Joi.object({
  itemId: requiredUuid,
  start: requiredDate,
  end: requiredDate,
  supplierId: uuidParam,
});
export const summaryQuery = Joi.object({ supplierId: uuidParam, startDate: dateParam, endDate: dateParam });
export const stockUpdatesQuery = Joi.object({
  startDate: dateParam,
  endDate: dateParam,
  itemName: text,
  supplierId: uuidParam,
  createdBy: text,
  minChange: change,
  maxChange: change,
});
export const stockUpdatesBody = Joi.object({
  startDate: dateParam.allow(null),
  endDate: dateParam.allow(null),
  itemName: text.allow(null),
  supplierId: uuidParam.allow(null),
  createdBy: text.allow(null),
  minChange: change.allow(null),
  maxChange: change.allow(null),
});
export const reasonBreakdownQuery = Joi.object({
  startDate: dateParam,
  endDate: dateParam,
  supplierId: uuidParam,
  itemName: text,
});
export const byEmployeeQuery = Joi.object({
  granularity: Joi.string().trim().lowercase().valid('daily', 'weekly', 'monthly').default('daily'),
  supplierId: uuidParam,
  startDate: dateParam,
  endDate: dateParam,
});
export const employeeChangesQuery = Joi.object({
  createdBy: text,
  supplierId: uuidParam,
  startDate: dateParam,
  endDate: dateParam,
  page: integer(),
  size: integer(),
  sort: Joi.alternatives().try(Joi.string(), Joi.array().items(Joi.string())),
});
