import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError, ValidationError, type FieldError } from '../shared/errors.js';
import { recordEvents } from '../outbox/record-events.js';
import { MAX_BATCH_ROWS, stockUpdateRow } from './catalog.schemas.js';
import {
  bigintArray,
  productColumns,
  toProductView,
  type ProductRow,
  type ProductView,
} from './product.view.js';
import { rowFieldErrors } from './product-errors.js';
import { PRODUCT_QUANTITY_CHANGED, quantityChanged } from './product-events.js';

export interface StockUpdate {
  productId: string;
  quantity: number;
}

/** Checks every row and reports every bad one at once (`updates[3].quantity`, index 3). */
export function parseStockUpdates(updates: unknown): StockUpdate[] {
  if (!Array.isArray(updates) || updates.length === 0)
    throw new ValidationError('product.batch.updates.required', {
      fieldErrors: [{ field: 'updates', messageKey: 'product.batch.updates.required' }],
    });
  if (updates.length > MAX_BATCH_ROWS)
    throw new ValidationError('product.batch.too.many', {
      params: { limit: MAX_BATCH_ROWS },
      fieldErrors: [
        { field: 'updates', messageKey: 'product.batch.too.many', params: { limit: MAX_BATCH_ROWS } },
      ],
    });
  const errors: FieldError[] = [];
  const rows: StockUpdate[] = [];
  const firstIndex = new Map<string, number>();
  updates.forEach((raw, index) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      errors.push({ field: `updates[${index}]`, messageKey: 'product.batch.row.invalid', index });
      return;
    }
    const { value, error } = stockUpdateRow.validate(raw, { abortEarly: false, stripUnknown: true });
    if (error) {
      errors.push(...rowFieldErrors('updates', index, error));
      return;
    }
    const row = value as StockUpdate;
    if (firstIndex.has(row.productId)) {
      errors.push({
        field: `updates[${index}].productId`,
        messageKey: 'product.batch.duplicate',
        params: { id: row.productId },
        index,
      });
      return;
    }
    firstIndex.set(row.productId, index);
    rows.push(row);
  });
  if (errors.length > 0)
    throw new ValidationError('product.batch.invalid', {
      params: { count: errors.length },
      fieldErrors: errors,
    });
  return rows;
}

/**
 * Sets the quantity of up to 1,000 products in ONE transaction: all rows are locked in id order (so two
 * batches, or a batch and single updates, can never deadlock), unknown ids abort everything with a 404
 * listing them, then one UPDATE sets every quantity and one INSERT writes the outbox events.
 * Returns the updated products in request order.
 */
export async function updateStockBatch(
  em: EntityManager,
  rawUpdates: unknown,
  actor: string,
): Promise<ProductView[]> {
  const updates = parseStockUpdates(rawUpdates);
  const ids = updates.map(u => u.productId);
  return em.transactional(async tem => {
    const locked = await tem.execute<{ id: string; quantity: number }[]>(
      'select id::text as id, quantity from product p where p.id = any(?::bigint[]) order by p.id for update',
      [bigintArray(ids)],
    );
    const before = new Map(locked.map(r => [r.id, r.quantity]));
    const missing: FieldError[] = [];
    updates.forEach((u, index) => {
      if (!before.has(u.productId))
        missing.push({
          field: `updates[${index}].productId`,
          messageKey: 'product.row.not.found',
          params: { id: u.productId },
          index,
        });
    });
    if (missing.length > 0)
      throw new NotFoundError('product.batch.not.found', {
        params: { ids: missing.map(m => m.params!.id).join(', ') },
        fieldErrors: missing,
      });

    const rows = await tem.execute<ProductRow[]>(
      `update product p set quantity = v.quantity, updated_at = now()
       from jsonb_to_recordset(?::jsonb) as v(id bigint, quantity integer)
       where p.id = v.id
       returning ${productColumns('p')}`,
      [JSON.stringify(updates.map(u => ({ id: u.productId, quantity: u.quantity })))],
    );
    const byId = new Map(rows.map(r => [r.id, toProductView(r)]));
    const views = ids.map(id => byId.get(id)!);
    await recordEvents(
      tem,
      PRODUCT_QUANTITY_CHANGED,
      views
        .filter(v => before.get(String(v.id)) !== v.quantity)
        .map(v => ({
          aggregateId: String(v.id),
          payload: quantityChanged(v, before.get(String(v.id))!, v.quantity, actor, v.updatedAt),
        })),
    );
    return views;
  });
}
