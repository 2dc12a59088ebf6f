import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { isUuid } from '../shared/sql.js';
import { normaliseReason } from '../stock-history/reasons.js';
import { itemNotFound, negativeStock, staleItem } from './item-errors.js';
import { ITEM_COLUMNS, toItemView, type ItemRow } from './item.view.js';
import { recordStockChanged } from './stock-event.js';
import type { StockWriteResult } from './create-item.js';

export interface AdjustQuantityInput {
  id: string;
  delta: number;
  reason: string;
  expectedQuantity?: number;
  /** From `If-Match`. */
  expectedVersion?: number;
}

/**
 * I8: one transaction = a guarded atomic update (never a read-modify-write; PostgreSQL re-checks the WHERE
 * clause on the newest row version after waiting for a concurrent writer, so no update is lost and stock
 * never goes below 0) + the outbox event. When the update matches nothing, the current row tells why:
 * 404 -> 412 (expectedQuantity / If-Match) -> 422 (would go negative).
 */
export async function adjustQuantity(
  em: EntityManager,
  input: AdjustQuantityInput,
  context: WriteContext,
): Promise<StockWriteResult> {
  if (!isUuid(input.id)) throw itemNotFound();
  const reason = normaliseReason(input.reason);
  return em.transactional(async tx => {
    for (;;) {
      const rows = await tx.execute<ItemRow[]>(
        `update inventory_item i
            set quantity = i.quantity + ?, version = i.version + 1, updated_at = now()
           from supplier s
          where s.id = i.supplier_id and i.id = ? and i.quantity + ? >= 0
            and (?::integer is null or i.quantity = ?::integer)
            and (?::integer is null or i.version = ?::integer)
        returning ${ITEM_COLUMNS}`,
        [
          input.delta,
          input.id,
          input.delta,
          input.expectedQuantity ?? null,
          input.expectedQuantity ?? null,
          input.expectedVersion ?? null,
          input.expectedVersion ?? null,
        ],
      );
      if (rows.length > 0) {
        const row = rows[0];
        const eventId = await recordStockChanged(
          tx,
          row,
          { change: input.delta, quantityBefore: Number(row.quantity) - input.delta, reason },
          context,
        );
        return { item: toItemView(row), eventIds: [eventId] };
      }
      const current = await tx.execute<{ quantity: number; version: number }[]>(
        'select quantity, version from inventory_item where id = ?',
        [input.id],
      );
      if (current.length === 0) throw itemNotFound();
      const { quantity, version } = current[0];
      if (input.expectedQuantity !== undefined && quantity !== input.expectedQuantity) throw staleItem();
      if (input.expectedVersion !== undefined && version !== input.expectedVersion) throw staleItem();
      if (quantity + input.delta < 0) throw negativeStock();
      // The row changed between the update and this read in a way that now allows the change: try again.
    }
  });
}
