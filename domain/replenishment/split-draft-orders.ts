import { MAX_TOTAL_CENTS } from '../purchasing/order-lines.js';
import { MAX_ORDER_LINES } from '../purchasing/purchasing.schemas.js';

/** A line the draft orders from suggestions orders: the item, the suggested quantity and the item's price in cents (the line's unit cost). */
export interface DraftLine {
  itemId: string;
  suggestedQuantity: number;
  priceCents: bigint;
}

/**
 * The draft orders from suggestions's orders of one supplier: the lines in the given (the suggestions's) order, a new order whenever the next line would
 * make the current one exceed 500 lines or the contract's `totalCost` cap (99,999,999,999.99). A line whose own
 * total is above the cap fits no order (order creation would refuse it): it is left out, as an item no order can carry.
 */
export function splitDraftOrders<L extends DraftLine>(lines: readonly L[]): L[][] {
  const orders: L[][] = [];
  let current: L[] = [];
  let total = 0n;
  for (const line of lines) {
    const cost = line.priceCents * BigInt(line.suggestedQuantity);
    if (cost > MAX_TOTAL_CENTS) continue;
    if (current.length === MAX_ORDER_LINES || total + cost > MAX_TOTAL_CENTS) {
      orders.push(current);
      current = [];
      total = 0n;
    }
    current.push(line);
    total += cost;
  }
  if (current.length > 0) orders.push(current);
  return orders;
}
