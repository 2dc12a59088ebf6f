import type { EntityManager } from '@mikro-orm/postgresql';
import { InventoryItem } from '../inventory/inventory-item.entity.js';
import { Supplier } from '../suppliers/supplier.entity.js';
import { NotFoundError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';
import { toCents } from '../shared/money.js';
import { PurchaseOrderLine, type PurchaseOrder } from './purchase-order.entity.js';
import { supplierMismatch, totalTooLarge } from './purchasing-errors.js';
import { costCents } from './purchase-order.view.js';

export interface OrderLineInput {
  itemId: string;
  quantity: number;
  /** Defaults to the item's price. */
  unitCost?: number;
}

/** The order creation and the order update body (validated by purchaseOrderBody). */
export interface PurchaseOrderInput {
  supplierId: string;
  lines: OrderLineInput[];
  note?: string | null;
  expectedAt?: string | Date | null;
}

/** The largest `totalCost` (contract: 99,999,999,999.99), in cents. */
export const MAX_TOTAL_CENTS = 9_999_999_999_999n;

const totalOf = (lines: { quantity: number; cents: bigint }[]): bigint =>
  lines.reduce((sum, line) => sum + line.cents * BigInt(line.quantity), 0n);

export const supplierNotFound = () => new NotFoundError('error.not.found.supplier');

/** A date-only `expectedAt` (joi gives a Date at UTC midnight). */
export const dateOnly = (value: string | Date | null | undefined): string | null =>
  value === null || value === undefined
    ? null
    : (value instanceof Date ? value : new Date(value)).toISOString().slice(0, 10);

/** An order input whose rules passed: its supplier, items and costs. */
export interface CheckedOrderInput {
  input: PurchaseOrderInput;
  supplier: Supplier;
  items: Map<string, InventoryItem>;
  lines: (OrderLineInput & { cents: bigint })[];
  total: bigint;
}

/**
 * The rules of order creation after validation, in the contract's order: the total of the lines that name their cost above
 * the cap -> 400; supplier missing -> 404; an item missing -> 404; an item of another supplier -> 409; the total
 * with the items' prices above the cap -> 400.
 */
export async function checkOrderInput(
  tx: EntityManager,
  input: PurchaseOrderInput,
): Promise<CheckedOrderInput> {
  const named = input.lines.filter(line => line.unitCost !== undefined);
  if (
    totalOf(named.map(l => ({ quantity: l.quantity, cents: BigInt(toCents(l.unitCost!)) }))) > MAX_TOTAL_CENTS
  )
    throw totalTooLarge();
  const supplier = isUuid(input.supplierId) ? await tx.findOne(Supplier, input.supplierId) : null;
  if (!supplier) throw supplierNotFound();
  const ids = input.lines.map(line => line.itemId);
  const items = ids.every(isUuid) ? await tx.find(InventoryItem, { id: { $in: ids } }) : [];
  const byId = new Map(items.map(item => [item.id, item]));
  if (input.lines.some(line => !byId.has(line.itemId))) throw new NotFoundError('error.not.found');
  const foreign = items.find(item => item.supplier.id !== supplier.id);
  if (foreign) throw supplierMismatch(foreign.id);
  const priced = input.lines.map(line => ({
    ...line,
    cents:
      line.unitCost !== undefined ? BigInt(toCents(line.unitCost)) : costCents(byId.get(line.itemId)!.price),
  }));
  const total = totalOf(priced);
  if (total > MAX_TOTAL_CENTS) throw totalTooLarge();
  return { input, supplier, items: byId, lines: priced, total };
}

/**
 * Writes supplier, note, expected date, lines (one per item, `itemName`/`sku` captured now; lines no longer in
 * the input are removed) and `totalCost` into `order`, in the unit of work of `tx` (flushed by the caller).
 */
export function writeOrderInput(tx: EntityManager, order: PurchaseOrder, checked: CheckedOrderInput): void {
  const { input, supplier, items: byId, lines: priced, total } = checked;
  const ids = input.lines.map(line => line.itemId);
  order.supplier = supplier;
  order.note = input.note ? input.note : null;
  order.expectedAt = dateOnly(input.expectedAt);
  order.totalCost = (Number(total) / 100).toFixed(2);
  const existing = new Map(order.lines.getItems().map(line => [line.itemId, line]));
  const wanted = new Set(ids);
  for (const line of existing.values()) if (!wanted.has(line.itemId)) order.lines.remove(line);
  for (const line of priced) {
    const item = byId.get(line.itemId)!;
    const fields = {
      itemName: item.name,
      sku: item.sku ?? null,
      quantityOrdered: line.quantity,
      unitCost: (Number(line.cents) / 100).toFixed(2),
    };
    const current = existing.get(line.itemId);
    if (current) tx.assign(current, fields);
    else
      order.lines.add(tx.create(PurchaseOrderLine, { purchaseOrder: order, itemId: line.itemId, ...fields }));
  }
}
