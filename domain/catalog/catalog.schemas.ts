import Joi from 'joi';
import { integer, MAX_MONEY, number } from '../shared/joi-extras.js';
import { hasAtMostTwoDecimals } from '../shared/money.js';
import { MAX_ITEM_QUANTITY } from '../inventory/inventory.schemas.js';

/** The caps of the contract, as for inventory items: every totalValue stays exact to the cent as a JSON number. */
export const MAX_QUANTITY = MAX_ITEM_QUANTITY;
export const MAX_PRICE = MAX_MONEY;
export const MAX_BATCH_ROWS = 1000;
export const MAX_LIST_LIMIT = 10000;
export const MAX_PAGE_SIZE = 200;
export const SORTABLE = ['id', 'name', 'quantity', 'price', 'totalValue', 'createdAt'] as const;
export type ProductSort = (typeof SORTABLE)[number];

/*
 * Field rules. Each field reports ONE error (a custom rule instead of integer + min + max), and every joi
 * message is an i18n key, so the product envelope carries the contract's exact texts.
 */

const quantityMessages = {
  'any.required': 'product.quantity.required',
  'number.base': 'product.quantity.integer',
  'number.unsafe': 'product.quantity.integer',
  'number.infinity': 'product.quantity.integer',
  'number.integer': 'product.quantity.integer',
  'number.min': 'product.quantity.negative',
  'number.max': 'product.quantity.too.large',
};

/** Integer 0..MAX_QUANTITY. `null` counts as missing when the field is required. */
export const quantityField = number()
  .custom((value: number, helpers) => {
    if (!Number.isInteger(value)) return helpers.error('number.integer');
    if (value < 0) return helpers.error('number.min', { limit: 0 });
    if (value > MAX_QUANTITY) return helpers.error('number.max', { limit: MAX_QUANTITY });
    return value;
  })
  .messages(quantityMessages)
  .description('integer >= 0');

export const requiredQuantity = quantityField.empty(null).required();

const priceMessages = {
  'any.required': 'product.price.required',
  'number.base': 'product.price.number',
  'number.unsafe': 'product.price.number',
  'number.infinity': 'product.price.number',
  'number.min': 'product.price.positive',
  'number.precision': 'product.price.precision',
  'number.max': 'product.price.too.large',
};

/** Number 0.01..MAX_PRICE with at most two decimals (checked on the decimal text, never rounded). */
export const priceField = number()
  .custom((value: number, helpers) => {
    if (value <= 0) return helpers.error('number.min', { limit: 0 });
    if (value > MAX_PRICE) return helpers.error('number.max', { limit: MAX_PRICE.toFixed(2) });
    if (!hasAtMostTwoDecimals(value)) return helpers.error('number.precision', { limit: 2 });
    return value;
  })
  .messages(priceMessages)
  .description('number >= 0.01, at most 2 decimals');

export const nameField = Joi.string().trim().max(255).messages({
  'any.required': 'product.name.required',
  'string.base': 'product.name.required',
  'string.empty': 'product.name.required',
  'string.max': 'product.name.too.long',
});

export const skuField = Joi.string().trim().max(50).messages({
  'string.base': 'product.sku.invalid',
  'string.empty': 'product.sku.invalid',
  'string.max': 'product.sku.too.long',
});

const optionalText = (max: number, field: 'category' | 'description') =>
  Joi.string()
    .trim()
    .max(max)
    .allow(null, '')
    .messages({ 'string.base': `product.${field}.invalid`, 'string.max': `product.${field}.too.long` });

export const categoryField = optionalText(100, 'category');
export const descriptionField = optionalText(1000, 'description');

/** `price` and `purchasePrice` are two spellings of one value: at least one (if required); equal if both. */
const pricePair =
  (required: boolean) =>
  (value: { price?: unknown; purchasePrice?: unknown }, helpers: Joi.CustomHelpers) => {
    const { price, purchasePrice } = value;
    if (required && price === undefined && purchasePrice === undefined)
      return helpers.error('price.missing', { key: 'price' });
    if (typeof price === 'number' && typeof purchasePrice === 'number' && price !== purchasePrice)
      return helpers.error('price.mismatch', { key: 'purchasePrice' });
    return value;
  };

const pairMessages = {
  'price.missing': 'product.price.required',
  'price.mismatch': 'product.price.mismatch',
};

/**
 * `price` is required unless `purchasePrice` is given (a `when` on the key, so the message appears next to the
 * other fields' errors; object-level rules only run once every key is valid).
 */
const priceKeys = {
  price: priceField.empty(null).when('purchasePrice', {
    is: Joi.exist().invalid(null),
    otherwise: Joi.required(),
  }),
  purchasePrice: priceField.empty(null),
};

export const createProductBody = Joi.object({
  name: nameField.required(),
  quantity: requiredQuantity,
  ...priceKeys,
  // Blank or null: generated, like an absent sku (form clients send empty fields).
  sku: skuField.empty(Joi.valid('', null)),
  category: categoryField,
  description: descriptionField,
})
  .custom(pricePair(true))
  .messages(pairMessages);

/** Any subset of the create fields (an empty object changes nothing). */
export const updateProductBody = Joi.object({
  name: nameField,
  quantity: quantityField,
  price: priceField,
  purchasePrice: priceField,
  sku: skuField,
  category: categoryField,
  description: descriptionField,
})
  .custom(pricePair(false))
  .messages(pairMessages);

export const quantityBody = Joi.object({ quantity: requiredQuantity });

export const priceBody = Joi.object(priceKeys).custom(pricePair(true)).messages(pairMessages);

export const nameBody = Joi.object({ name: nameField.empty(null).required() });

const INT64_MAX = 9223372036854775807n;

/**
 * A product id given as a JSON number or a digit string -> its canonical digit string (`007` -> `7`), or
 * undefined when it is not a non-negative int64.
 */
export function toProductId(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,19}$/.test(value)) return undefined;
  const id = BigInt(value);
  return id <= INT64_MAX ? id.toString() : undefined;
}

/** Path ids are int64: digits only, normalised (`007` -> `7`). */
export const productIdParams = Joi.object({
  id: Joi.string()
    .pattern(/^[0-9]{1,19}$/)
    .custom((value: string, helpers) => toProductId(value) ?? helpers.error('string.pattern.base'))
    .required()
    .messages({ 'string.pattern.base': 'product.id.invalid', 'string.base': 'product.id.invalid' })
    .description('product id (int64)'),
});

const nonNegativeInt = (max: number, key: string) =>
  integer().min(0).max(max).messages({
    'number.base': key,
    'number.integer': key,
    'number.min': key,
    'number.max': key,
    'number.unsafe': key,
  });

export const listQuery = Joi.object({
  limit: nonNegativeInt(MAX_LIST_LIMIT, 'product.list.limit').min(1),
  page: nonNegativeInt(1_000_000_000, 'product.list.page'),
  sortBy: Joi.string()
    .valid(...SORTABLE)
    .messages({ 'any.only': 'product.list.sort.by', 'string.base': 'product.list.sort.by' }),
  order: Joi.string()
    .lowercase()
    .valid('asc', 'desc')
    .messages({ 'any.only': 'product.list.order', 'string.base': 'product.list.order' }),
});

export const pagedQuery = Joi.object({
  page: nonNegativeInt(1_000_000_000, 'product.paging.page').default(0),
  size: nonNegativeInt(MAX_PAGE_SIZE, 'product.paging.size').min(1).default(10),
});

const searchTerm = Joi.string().max(255).allow('').messages({ 'string.max': 'product.search.term.too.long' });

export const searchQuery = Joi.object({ name: searchTerm, q: searchTerm });

/** One row of a batch stock update; `productId` may be a number or a numeric string (both clients). */
export const stockUpdateRow = Joi.object({
  productId: Joi.any()
    .required()
    .custom((value: unknown, helpers) => {
      return toProductId(value) ?? helpers.error('any.invalid');
    })
    .messages({
      'any.required': 'product.batch.product.id.invalid',
      'any.invalid': 'product.batch.product.id.invalid',
    }),
  quantity: requiredQuantity,
});

/**
 * Documented shape of the batch body. Rows are deliberately loose here (any value passes the route check) and
 * are checked one by one by the use case, which reports every bad row at once with its index.
 */
export const stockBatchBody = Joi.object({
  updates: Joi.array()
    .items(
      Joi.alternatives().try(
        Joi.object({
          productId: Joi.any().description('product id: integer or numeric string'),
          quantity: Joi.any().description('new quantity: integer >= 0'),
        }).unknown(true),
        Joi.any(),
      ),
    )
    .description(`at most ${MAX_BATCH_ROWS} rows`),
});

/** Documented shape of the bulk delete body; ids are checked by the use case. */
export const bulkDeleteBody = Joi.object({
  ids: Joi.array()
    .items(Joi.any().description('product id: integer or numeric string'))
    .description(`at most ${MAX_BATCH_ROWS} ids`),
});
