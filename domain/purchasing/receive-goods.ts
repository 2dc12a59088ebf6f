import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { stockChangedInsertSql } from '../outbox/stock-changed-payload.js';
import { ConflictError, ValidationError } from '../shared/errors.js';
import type { WriteContext } from '../shared/write-context.js';
import { arrayLiteral } from '../shared/sql.js';
import { MAX_ITEM_QUANTITY } from '../inventory/inventory.schemas.js';
import { itemChangeInsert } from '../inventory/item-change.js';
import { quantityTooLarge } from '../inventory/item-errors.js';
import { bumpVersion, lockItems, lockOrder } from './lock-order.js';
import { OPEN_ORDER_STATUSES } from './purchase-order.entity.js';
import { PurchaseReceipt, PurchaseReceiptLine } from './purchase-receipt.entity.js';
import { toReceiptView, type ReceiptView } from './receipt.view.js';
import { toPurchaseOrderView } from './purchase-order.view.js';
import { recordOrderEvent } from './order-events.js';

export interface ReceiptInput {
  id: string;
  lines: { itemId: string; quantity: number }[];
  note?: string | null;
}

/**
 * The stock side of a receipt as ONE statement over all its lines, each line as an adjustment writes it
 * (adjust-quantity.ts): the guarded update (never above the maximum quantity; the items are locked by the
 * caller, so a line that does not match is one that would exceed it), its item-change record, and its outbox
 * event (RESTOCK) carrying the reserved history entry id, the line's unit cost and the order. The same update
 * lowers `onOrderQuantity` by what arrived. Events are written in item id order.
 */
const RECEIPT_SQL = `
with x as (
  select * from unnest(?::uuid[], ?::int[], ?::bigint[], ?::numeric[]) as x(id, delta, entry_id, unit_cost)
), a as (
  select ?::text as created_by, ?::text as correlation_id, ?::text as purchase_order_id
), u as (
  update inventory_item i
     set quantity = i.quantity + x.delta, on_order_quantity = i.on_order_quantity - x.delta,
         version = i.version + 1, updated_at = clock_timestamp()
    from x, supplier s
   where i.id = x.id and s.id = i.supplier_id and i.quantity + x.delta <= ${MAX_ITEM_QUANTITY}
  returning i.*, s.name as supplier_name, x.delta, x.entry_id, x.unit_cost, i.updated_at as changed_at
), c as (${itemChangeInsert('u', 'updated', 'u.changed_at')}
), ${stockChangedInsertSql(
  'e',
  'u',
  'u.supplier_name',
  {
    change: 'u.delta',
    quantityBefore: 'u.quantity - u.delta',
    quantityAfter: 'u.quantity',
    reason: "'RESTOCK'",
    createdBy: 'a.created_by',
    correlationId: 'a.correlation_id',
    entryId: 'u.entry_id::text',
    unitCost: 'u.unit_cost::numeric(14, 4)::text',
    purchaseOrderId: 'a.purchase_order_id',
    at: 'u.changed_at',
  },
  'from u, a order by u.id',
)}
select (select count(*) from u)::int as updated, array(select id::text from e order by id) as event_ids`;

/**
 * A receipt: 404 -> 409 unless ORDERED or PARTIALLY_RECEIVED -> 400 a line for an item not on the order -> 409 more
 * than the line still awaits (`purchase.receipt.over`) -> 422 a line that would take its item above the maximum
 * quantity (nothing written). ONE transaction, every check under its locks (the order row first, then its
 * items in id order), so two receipts racing for the last open quantity of a line queue on the order row and
 * the second sees what the first received. The history entry ids are reserved here, as a reversal's are.
 */
export async function receiveGoods(
  em: EntityManager,
  input: ReceiptInput,
  context: WriteContext,
): Promise<{ receipt: ReceiptView; eventIds: string[] }> {
  return em.transactional(async tx => {
    const order = await lockOrder(tx, input.id, undefined, OPEN_ORDER_STATUSES);
    const byItem = new Map(order.lines.getItems().map(line => [line.itemId, line]));
    const missing = input.lines.find(line => !byItem.has(line.itemId));
    if (missing)
      throw new ValidationError('purchase.line.not.on.order', {
        params: { itemId: missing.itemId },
        fieldErrors: [
          { field: 'lines', messageKey: 'purchase.line.not.on.order', params: { itemId: missing.itemId } },
        ],
      });
    for (const line of input.lines) {
      const open = byItem.get(line.itemId)!.quantityOrdered - byItem.get(line.itemId)!.quantityReceived;
      if (line.quantity > open)
        throw new ConflictError('purchase.receipt.over', { params: { itemId: line.itemId, open } });
    }
    const lines = [...input.lines].sort((a, b) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0));
    await lockItems(
      tx,
      lines.map(line => line.itemId),
    );
    const entryIds = await tx.execute<{ id: string }[]>(
      "select nextval('stock_history_id_seq')::text as id from generate_series(1, ?::int)",
      [lines.length],
    );
    const [written] = await tx.execute<{ updated: number; event_ids: string[] }[]>(RECEIPT_SQL, [
      arrayLiteral(lines.map(line => line.itemId)),
      arrayLiteral(lines.map(line => line.quantity)),
      arrayLiteral(entryIds.map(row => row.id)),
      arrayLiteral(lines.map(line => byItem.get(line.itemId)!.unitCost)),
      context.user,
      context.correlationId,
      order.id,
    ]);
    if (Number(written.updated) !== lines.length) throw quantityTooLarge();

    const receipt = tx.create(PurchaseReceipt, {
      id: randomUUID(),
      purchaseOrder: order,
      note: input.note ? input.note : null,
      receivedBy: context.user,
    });
    lines.forEach((line, i) => {
      byItem.get(line.itemId)!.quantityReceived += line.quantity;
      receipt.lines.add(
        tx.create(PurchaseReceiptLine, {
          receipt,
          itemId: line.itemId,
          quantity: line.quantity,
          entryId: entryIds[i].id,
        }),
      );
    });
    const complete = order.lines.getItems().every(line => line.quantityReceived === line.quantityOrdered);
    order.status = complete ? 'RECEIVED' : 'PARTIALLY_RECEIVED';
    if (complete) order.receivedAt = new Date();
    bumpVersion(order);
    await tx.flush();
    const eventIds = written.event_ids.map(String);
    if (complete)
      eventIds.push(await recordOrderEvent(tx, 'purchase_order.received', toPurchaseOrderView(order)));
    return { receipt: toReceiptView(receipt), eventIds };
  });
}
