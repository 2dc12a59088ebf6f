import { toUnits } from '../decimal.js';
import { applyReversal, applyWac, type WacState } from '../wac.js';

/** The supplier key of an event without a supplier (primary keys cannot hold null). */
export const NO_SUPPLIER = '00000000-0000-0000-0000-000000000000';

/** What the rollups need of one stock event (a `stock.changed` payload or a stock-history row). */
export interface FoldEvent {
  /** The outbox event's id (decimal). */
  id: string;
  itemId: string;
  itemName: string;
  supplierId: string | null;
  supplierName: string | null;
  /** UTC day of the event, yyyy-MM-dd. */
  day: string;
  change: number;
  quantityAfter: number;
  reason: string;
  priceAtChange: string;
  createdBy: string;
  /** A reversal: the original's unit cost it is booked at (wac.ts applyReversal); null or absent otherwise. */
  reversalUnitCost?: string | null;
  /** An entry that is no reversal with a cost of its own (a receipt's line cost): stock in enters the average at it. */
  unitCost?: string | null;
}

export interface DayRow {
  itemId: string;
  day: string;
  supplierKey: string;
  supplierName: string | null;
  itemName: string;
  entries: number;
  qtyIn: number;
  qtyOut: number;
  priceSum: bigint;
  closingQuantity: number;
  closingPrice: string;
  wacQ: number;
  wacC: bigint;
  purchasesQty: number;
  purchasesCost: bigint;
  returnsInQty: number;
  returnsInCost: bigint;
  cogsQty: number;
  cogsCost: bigint;
  writeOffQty: number;
  writeOffCost: bigint;
  lastEventId: string;
}

export interface ReasonRow {
  itemId: string;
  day: string;
  supplierKey: string;
  reason: string;
  itemName: string;
  entries: number;
  increase: number;
  decrease: number;
}

export interface UserRow {
  day: string;
  supplierKey: string;
  createdBy: string;
  entries: number;
}

export interface FoldResult {
  state: WacState & { lastEventId: string };
  days: DayRow[];
  reasons: ReasonRow[];
  users: UserRow[];
}

/**
 * Folds one item's events (in event-id order) into day, reason and user deltas plus the item's new running
 * state. Pure: the consumer merges the deltas into the tables, the rebuild inserts them.
 */
export function foldItemEvents(start: WacState & { lastEventId: string }, events: FoldEvent[]): FoldResult {
  let state: WacState = { q: start.q, c: start.c };
  let lastEventId = start.lastEventId;
  const days = new Map<string, DayRow>();
  const reasons = new Map<string, ReasonRow>();
  const users = new Map<string, UserRow>();
  for (const e of events) {
    const supplierKey = e.supplierId ?? NO_SUPPLIER;
    const applied =
      e.reversalUnitCost === undefined || e.reversalUnitCost === null
        ? applyWac(state, e.change, e.reason, e.unitCost ?? e.priceAtChange)
        : applyReversal(state, e.change, e.reason, e.reversalUnitCost);
    state = applied.state;
    const key = `${e.day}|${supplierKey}`;
    let row = days.get(key);
    if (!row) {
      row = {
        itemId: e.itemId,
        day: e.day,
        supplierKey,
        supplierName: e.supplierName,
        itemName: e.itemName,
        entries: 0,
        qtyIn: 0,
        qtyOut: 0,
        priceSum: 0n,
        closingQuantity: 0,
        closingPrice: '0',
        wacQ: 0,
        wacC: 0n,
        purchasesQty: 0,
        purchasesCost: 0n,
        returnsInQty: 0,
        returnsInCost: 0n,
        cogsQty: 0,
        cogsCost: 0n,
        writeOffQty: 0,
        writeOffCost: 0n,
        lastEventId: e.id,
      };
      days.set(key, row);
    }
    row.entries += 1;
    if (e.change > 0) row.qtyIn += e.change;
    else row.qtyOut -= e.change;
    row.priceSum += toUnits(e.priceAtChange);
    row.itemName = e.itemName;
    row.supplierName = e.supplierName;
    row.closingQuantity = e.quantityAfter;
    row.closingPrice = e.priceAtChange;
    row.wacQ = state.q;
    row.wacC = state.c;
    row.lastEventId = e.id;
    const move = applied.move;
    if (move?.bucket === 'purchases') {
      row.purchasesQty += move.qty;
      row.purchasesCost += move.cost;
    } else if (move?.bucket === 'returnsIn') {
      row.returnsInQty += move.qty;
      row.returnsInCost += move.cost;
    } else if (move?.bucket === 'cogs') {
      row.cogsQty += move.qty;
      row.cogsCost += move.cost;
    } else if (move?.bucket === 'writeOff') {
      row.writeOffQty += move.qty;
      row.writeOffCost += move.cost;
    }

    const reasonKey = `${key}|${e.reason}`;
    const r = reasons.get(reasonKey) ?? {
      itemId: e.itemId,
      day: e.day,
      supplierKey,
      reason: e.reason,
      itemName: e.itemName,
      entries: 0,
      increase: 0,
      decrease: 0,
    };
    r.entries += 1;
    r.itemName = e.itemName;
    if (e.change > 0) r.increase += e.change;
    else r.decrease -= e.change;
    reasons.set(reasonKey, r);

    const userKey = `${key}|${e.createdBy}`;
    const u = users.get(userKey) ?? { day: e.day, supplierKey, createdBy: e.createdBy, entries: 0 };
    u.entries += 1;
    users.set(userKey, u);
    lastEventId = e.id;
  }
  return {
    state: { ...state, lastEventId },
    days: [...days.values()],
    reasons: [...reasons.values()],
    users: [...users.values()],
  };
}
