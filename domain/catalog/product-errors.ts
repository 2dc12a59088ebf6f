import type Joi from 'joi';
import { DuplicateResourceError, type FieldError, type MessageParams } from '../shared/errors.js';

/** Name of the unique index a PostgreSQL unique violation hit, if it was one. */
export function uniqueIndexOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e && e.code === '23505' && typeof e.constraint === 'string' ? e.constraint : undefined;
}

/** Unique violations on product become the contract's 409 messages; anything else is rethrown unchanged. */
export function productConflict(error: unknown, values: { name?: string; sku?: string }): unknown {
  const index = uniqueIndexOf(error);
  if (index === 'product_name_uq')
    return new DuplicateResourceError('product.name.duplicate', {
      params: { name: values.name ?? '' },
      fieldErrors: [
        { field: 'name', messageKey: 'product.name.duplicate', params: { name: values.name ?? '' } },
      ],
      cause: error,
    });
  if (index === 'product_sku_uq')
    return new DuplicateResourceError('product.sku.duplicate', {
      params: { sku: values.sku ?? '' },
      fieldErrors: [{ field: 'sku', messageKey: 'product.sku.duplicate', params: { sku: values.sku ?? '' } }],
      cause: error,
    });
  return error;
}

/** joi details of one row of a list -> field errors named `list[index].field` and carrying the index. */
export function rowFieldErrors(list: string, index: number, error: Joi.ValidationError): FieldError[] {
  return error.details.map(detail => {
    const params: MessageParams = {};
    for (const [key, value] of Object.entries(detail.context ?? {}))
      if (typeof value === 'string' || typeof value === 'number') params[key] = value;
    const path = detail.path.map(String).join('.');
    return {
      field: path ? `${list}[${index}].${path}` : `${list}[${index}]`,
      messageKey: detail.message,
      params,
      index,
    };
  });
}
