import {
  DuplicateResourceError,
  NotFoundError,
  PreconditionFailedError,
  UnprocessableError,
} from '../shared/errors.js';

export const itemNotFound = () => new NotFoundError('inventory.item.not.found');
export const supplierNotFound = () => new NotFoundError('error.not.found.supplier');
export const duplicateItemName = () => new DuplicateResourceError('error.duplicate.resource');
export const duplicateSku = () => new DuplicateResourceError('inventory.item.sku.duplicate');
export const staleItem = () => new PreconditionFailedError('inventory.item.stale');
export const negativeStock = () => new UnprocessableError('inventory.item.quantity.negative');
/** An adjustment whose result would exceed the maximum quantity create and PUT accept. */
export const quantityTooLarge = () => new UnprocessableError('inventory.item.quantity.max');

/**
 * `If-Match` value -> expected version. `*` or absent -> undefined (any version); `"3"`, `W/"3"` and `3` -> 3;
 * anything else can never match: -1, so the use case still answers 404 first and 412 after (contract order).
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*' || header.trim() === '') return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  return match ? Number(match[1]) : -1;
}
