import type { EntityManager } from '@mikro-orm/postgresql';
import type { WriteContext } from '../shared/write-context.js';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import { adjustQuantity } from '../inventory/adjust-quantity.js';
import { applyReversal, applyWac, type WacState } from '../analytics/wac.js';
import { formatUnits, toUnits } from '../analytics/decimal.js';
import type { StockHistoryView } from './stock-history.view.js';

const entryNotFound = () => new NotFoundError('stock.history.entry.not.found');
export const isEntryId = (id: string): boolean => /^[1-9]\d{0,17}$/.test(id);

interface Original {
  id: string;
  outbox_event_id: string;
  item_id: string;
  change: number;
  reason: string;
  price_at_change: string;
  reversal_of: string | null;
  purchase_order_id: string | null;
}

/**
 * The unit cost a reversal of `original` is booked at: an inbound original's unit price, an outbound original's
 * running average cost just before it (the item's earlier entries replayed with the contract's weighted average,
 * receipts at their unit cost; the history keeps an item's entries in event order).
 */
async function unitCostOf(tx: EntityManager, original: Original): Promise<string> {
  if (original.change > 0) return formatUnits(toUnits(original.price_at_change));
  const earlier = await tx.execute<
    { change: number; reason: string; price: string; unit_cost: string | null; reversal_of: string | null }[]
  >(
    `select change, reason, price_at_change::text as price, unit_cost::text as unit_cost, reversal_of::text as reversal_of
       from stock_history where item_id = ? and outbox_event_id < ? order by outbox_event_id`,
    [original.item_id, original.outbox_event_id],
  );
  let state: WacState = { q: 0, c: 0n };
  for (const e of earlier)
    state = (
      e.reversal_of !== null && e.unit_cost !== null
        ? applyReversal(state, Number(e.change), e.reason, e.unit_cost)
        : applyWac(state, Number(e.change), e.reason, e.unit_cost ?? e.price)
    ).state;
  return formatUnits(state.c);
}

/**
 * POST /api/stock-history/{id}/reverse: 404 -> 400 (change 0) -> 409 (a reversal itself, a receipt's entry, already reversed, item
 * deleted) -> 422 (would go negative; nothing written). In one transaction: the link row keyed by the original's
 * id (its primary key refuses a second reversal, however concurrent: a racing request waits on it and then
 * conflicts), the reserved id of the new entry, and the compensating change through the guarded one-statement
 * write and outbox of an adjustment, carrying the link, the reserved id and the original's unit cost to the
 * consumers. The history row is written by the stock-history consumer, with that id.
 */
export async function reverseEntry(
  em: EntityManager,
  input: { id: string; note?: string | null },
  context: WriteContext,
): Promise<{ entry: StockHistoryView; eventIds: string[] }> {
  if (!isEntryId(input.id)) throw entryNotFound();
  return em.transactional(async tx => {
    const [original] = await tx.execute<Original[]>(
      `select id::text as id, outbox_event_id::text as outbox_event_id, item_id, change, reason,
              price_at_change::text as price_at_change, reversal_of::text as reversal_of,
              purchase_order_id
         from stock_history where id = ?`,
      [input.id],
    );
    if (!original) {
      const pending = await tx.execute('select 1 from stock_reversal where reversal_entry_id = ?', [
        input.id,
      ]);
      if (pending.length > 0) throw new ConflictError('stock.history.reversal.of.reversal');
      throw entryNotFound();
    }
    if (Number(original.change) === 0) throw new ValidationError('stock.history.reversal.no.change');
    if (original.reversal_of !== null) throw new ConflictError('stock.history.reversal.of.reversal');
    // Goods received on an order go back with an adjustment RETURNED_TO_SUPPLIER (contract purchasing-api.md).
    if (original.purchase_order_id !== null) throw new ConflictError('purchase.receipt.reverse');
    const [{ entry_id: entryId }] = await tx.execute<{ entry_id: string }[]>(
      "select nextval('stock_history_id_seq')::text as entry_id",
    );
    const linked = await tx.execute(
      `insert into stock_reversal (original_id, reversal_entry_id, created_by) values (?, ?, ?)
       on conflict (original_id) do nothing returning 1`,
      [original.id, entryId, context.user],
    );
    if (linked.length === 0) throw new ConflictError('stock.history.reversal.already');
    const note = input.note ? input.note : null;
    const unitCost = await unitCostOf(tx, original);
    const result = await adjustQuantity(
      tx,
      {
        id: original.item_id,
        delta: -Number(original.change),
        reason: original.reason,
        payload: { reversalOf: original.id, entryId, unitCost, note },
      },
      context,
    ).catch((error: unknown) => {
      if (error instanceof AppError && error.status === 404)
        throw new ConflictError('stock.history.reversal.item.deleted');
      throw error;
    });
    const item = result.item;
    const entry: StockHistoryView = {
      id: entryId,
      itemId: item.id,
      itemName: item.name,
      supplierId: item.supplierId,
      supplierName: item.supplierName,
      change: -Number(original.change),
      quantityBefore: item.quantity + Number(original.change),
      quantityAfter: item.quantity,
      reason: original.reason,
      priceAtChange: item.price,
      createdBy: context.user,
      timestamp: result.at ?? item.updatedAt,
      reversalOf: original.id,
      reversedBy: null,
      note,
      unitCost: null,
      purchaseOrderId: null,
    };
    return { entry, eventIds: result.eventIds };
  });
}
