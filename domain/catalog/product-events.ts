/** Outbox event written with every product quantity change (no consumer processes it yet). */
export const PRODUCT_QUANTITY_CHANGED = 'product.quantity.changed';

export interface ProductQuantityChangedPayload {
  productId: number;
  name: string;
  quantityBefore: number;
  quantityAfter: number;
  change: number;
  actor: string;
  /** ISO-8601 UTC. */
  occurredAt: string;
}

export function quantityChanged(
  product: { id: number; name: string },
  quantityBefore: number,
  quantityAfter: number,
  actor: string,
  occurredAt: string,
): ProductQuantityChangedPayload {
  return {
    productId: product.id,
    name: product.name,
    quantityBefore,
    quantityAfter,
    change: quantityAfter - quantityBefore,
    actor,
    occurredAt,
  };
}
