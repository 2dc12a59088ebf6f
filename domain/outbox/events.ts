/**
 * Outbox event types. A `stock.changed` event carries everything its consumers need, so no consumer has to
 * read the item back (it may be gone or changed by then).
 */
export const STOCK_CHANGED = 'stock.changed';

export interface StockChangedPayload {
  itemId: string;
  itemName: string;
  supplierId: string | null;
  supplierName: string | null;
  /** Signed quantity delta; 0 for PRICE_CHANGE and deletions. */
  change: number;
  quantityBefore: number;
  quantityAfter: number;
  minimumQuantity: number;
  /** Stored reason (aliases already normalised): a change reason, a deletion reason or PRICE_CHANGE. */
  reason: string;
  /** Unit price at the change as a 2-decimal string (the NEW price for PRICE_CHANGE). */
  priceAtChange: string;
  /** True for the deletion event: the item no longer exists after it. */
  deleted?: boolean;
  createdBy: string;
  /** A reversal (POST /api/stock-history/{id}/reverse): the reversed entry's id. */
  reversalOf?: string;
  /** A reversal: the id reserved for its history entry in the reversing request. */
  entryId?: string;
  /** A reversal: the original's unit cost (4 decimals), at which the reversal is booked. */
  unitCost?: string;
  note?: string | null;
  /** A receipt (POST /api/purchase-orders/{id}/receipts): its order; `entryId` and `unitCost` are its line's. */
  purchaseOrderId?: string;
  /** ISO-8601 UTC, the transaction's time. */
  occurredAt: string;
  correlationId: string | null;
}
