import Joi from 'joi';
import { hasAtMostTwoDecimals } from './money.js';

/** Integers as text: plain decimal digits, a minus sign only before a non-zero value (`-0` is refused). */
const PLAIN_INTEGER = /^(?:\d+|-\d*[1-9]\d*)$/;
/** Other numbers as text: digits with an optional fraction; no exponent, blanks, `+`, `.5` or `5.`. */
const PLAIN_DECIMAL = /^-?\d+(?:\.\d+)?$/;

/**
 * joi's number type reading text strictly: joi alone converts `1e2`, `5.`, ` 5` and `-0` from query strings
 * (and string fields of bodies) into numbers; here such text is a 400 before conversion. JSON numbers are
 * unaffected.
 */
const strict: Joi.Root = Joi.extend(joi => ({
  type: 'number',
  base: joi.number(),
  prepare(value: unknown, helpers: Joi.CustomHelpers) {
    if (typeof value !== 'string' || !helpers.prefs.convert) return undefined;
    const integerOnly = helpers.schema.$_getRule('integer') !== undefined;
    if ((integerOnly ? PLAIN_INTEGER : PLAIN_DECIMAL).test(value)) return undefined;
    return { value, errors: [helpers.error(integerOnly ? 'number.integer' : 'number.base')] };
  },
}));

/** A number parameter or field (text must be a plain decimal number). */
export const number = (): Joi.NumberSchema => strict.number();

/** An integer parameter or field (text must be plain decimal digits). */
export const integer = (): Joi.NumberSchema => strict.number().integer();

/**
 * The largest price (contract: 10,000,000.00). With quantities capped at 999,999, every total of one item is at
 * most 9,999,990,000,000.00, which a JSON number (a double) holds exactly to the cent.
 */
export const MAX_MONEY = 10_000_000;

/**
 * A money amount 0.01..MAX_MONEY with at most two decimals (never rounded: more decimals are a 400). An amount
 * above the maximum is refused as too large, whatever its decimals.
 */
export const moneySchema = (messages: { min: string; max: string; precision: string; required: string }) =>
  number()
    .min(0.01)
    .max(MAX_MONEY)
    .custom((value: number, helpers) =>
      value > MAX_MONEY || hasAtMostTwoDecimals(value)
        ? value
        : helpers.error('number.precision', { limit: 2 }),
    )
    .messages({
      'number.min': messages.min,
      'number.max': messages.max,
      'number.precision': messages.precision,
      'any.required': messages.required,
    });

/** `page`, `size`, `sort` as they arrive; bounds are checked by parsePageRequest (paging error body). */
export const pagingQuery = {
  page: integer(),
  size: integer(),
  sort: Joi.alternatives(Joi.string(), Joi.array().items(Joi.string())),
};
