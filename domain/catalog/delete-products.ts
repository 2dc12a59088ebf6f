import type { EntityManager } from '@mikro-orm/postgresql';
import Joi from 'joi';
import { NotFoundError, ValidationError, type FieldError } from '../shared/errors.js';
import { MAX_BATCH_ROWS, toProductId } from './catalog.schemas.js';
import { bigintArray } from './product.view.js';
import { rowFieldErrors } from './product-errors.js';

const idSchema = Joi.any()
  .required()
  .custom((value: unknown, helpers) => {
    return toProductId(value) ?? helpers.error('any.invalid');
  })
  .messages({ 'any.required': 'product.bulk.id.invalid', 'any.invalid': 'product.bulk.id.invalid' });

/** Checks the id list and reports every bad entry at once (`ids[3]`). Returns the distinct ids. */
export function parseIdList(ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0)
    throw new ValidationError('product.bulk.ids.required', {
      fieldErrors: [{ field: 'ids', messageKey: 'product.bulk.ids.required' }],
    });
  if (ids.length > MAX_BATCH_ROWS)
    throw new ValidationError('product.bulk.too.many', {
      params: { limit: MAX_BATCH_ROWS },
      fieldErrors: [{ field: 'ids', messageKey: 'product.bulk.too.many', params: { limit: MAX_BATCH_ROWS } }],
    });
  const errors: FieldError[] = [];
  const parsed: string[] = [];
  ids.forEach((raw, index) => {
    const { value, error } = idSchema.validate(raw);
    if (error) errors.push(...rowFieldErrors('ids', index, error));
    else parsed.push(value as string);
  });
  if (errors.length > 0) throw new ValidationError(errors[0].messageKey, { fieldErrors: errors });
  return [...new Set(parsed)];
}

/**
 * Deletes every listed product or none: the rows are locked in id order (no deadlock with batch updates),
 * and any unknown id aborts the whole request with a 404 listing the unknown ids.
 */
export async function deleteProducts(em: EntityManager, rawIds: unknown): Promise<void> {
  const ids = parseIdList(rawIds);
  await em.transactional(async tem => {
    const found = await tem.execute<{ id: string }[]>(
      'select id::text as id from product p where p.id = any(?::bigint[]) order by p.id for update',
      [bigintArray(ids)],
    );
    const existing = new Set(found.map(r => r.id));
    const rawList = rawIds as unknown[];
    const missing = ids.filter(id => !existing.has(id));
    if (missing.length > 0) {
      const fieldErrors: FieldError[] = [];
      rawList.forEach((raw, index) => {
        const id = toProductId(raw)!;
        if (!existing.has(id))
          fieldErrors.push({
            field: `ids[${index}]`,
            messageKey: 'product.row.not.found',
            params: { id },
            index,
          });
      });
      throw new NotFoundError('product.bulk.delete.not.found', {
        params: { ids: missing.join(', ') },
        fieldErrors,
      });
    }
    await tem.execute('delete from product where id = any(?::bigint[])', [bigintArray(ids)]);
  });
}
