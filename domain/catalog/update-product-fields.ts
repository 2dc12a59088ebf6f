import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { recordEvent } from '../outbox/record-event.js';
import { moneyText } from '../shared/money.js';
import type { Product } from './product.entity.js';
import { productViewOf, type ProductView } from './product.view.js';
import { lockProduct, touch } from './lock-product.js';
import { productConflict } from './product-errors.js';
import { PRODUCT_QUANTITY_CHANGED, quantityChanged } from './product-events.js';

export interface UpdateProductFieldsInput {
  name?: string;
  quantity?: number;
  price?: number;
  sku?: string;
  category?: string | null;
  description?: string | null;
}

const blankToNull = (text: string | null | undefined) => (text === '' ? null : text);

/** The entity's values of the fields given (and only those): blank category and description stored as null. */
function givenFields(input: UpdateProductFieldsInput): Partial<Product> {
  const values = {
    name: input.name,
    quantity: input.quantity,
    price: input.price === undefined ? undefined : moneyText(input.price),
    sku: input.sku,
    category: blankToNull(input.category),
    description: blankToNull(input.description),
  };
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

/**
 * Partial update: only the given fields change. The row is locked first, so a quantity change knows the value
 * it replaces and writes its outbox event in the same transaction (no lost update, never below 0).
 */
export async function updateProductFields(
  em: EntityManager,
  id: string,
  input: UpdateProductFieldsInput,
  actor: string,
): Promise<ProductView> {
  try {
    return await em.transactional(async tx => {
      const product = await lockProduct(
        tx,
        id,
        () => new NotFoundError('product.not.found.id', { params: { id } }),
      );
      const before = product.quantity;
      tx.assign(product, givenFields(input));
      touch(product);
      await tx.flush();
      const view = productViewOf(product);
      if (view.quantity !== before)
        await recordEvent(
          tx,
          PRODUCT_QUANTITY_CHANGED,
          product.id,
          quantityChanged(view, before, view.quantity, actor, view.updatedAt),
        );
      return view;
    });
  } catch (error) {
    throw productConflict(error, { name: input.name, sku: input.sku });
  }
}
