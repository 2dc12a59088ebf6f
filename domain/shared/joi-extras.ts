import Joi from 'joi';
import { hasAtMostTwoDecimals } from './money.js';

/** A money amount >= 0.01 with at most two decimals (never rounded: more decimals are a 400). */
export const moneySchema = (messages: { min: string; precision: string; required: string }) =>
  Joi.number()
    .min(0.01)
    .max(9999999999.99)
    .custom((value: number, helpers) =>
      hasAtMostTwoDecimals(value) ? value : helpers.error('number.precision', { limit: 2 }),
    )
    .messages({
      'number.min': messages.min,
      'number.precision': messages.precision,
      'any.required': messages.required,
    });

/** `page`, `size`, `sort` as they arrive; bounds are checked by parsePageRequest (paging error body). */
export const pagingQuery = {
  page: Joi.number().integer(),
  size: Joi.number().integer(),
  sort: Joi.alternatives(Joi.string(), Joi.array().items(Joi.string())),
};
