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
  /** The item whose events the row counts (its rollup slot). */
  itemId: string;
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

/** The rows folds write: day, reason and user deltas, each list in the order its rows first appeared. */
export interface FoldRows {
  days: DayRow[];
  reasons: ReasonRow[];
  users: UserRow[];
}

/**
 * Folds one item's events (in event-id order) into day, reason and user deltas plus the item's new running
 * state. Pure: the consumer merges the deltas into the tables, the rebuild inserts them.
 */
export function foldItemEvents(start: WacState & { lastEventId: string }, events: FoldEvent[]): FoldResult {
  const rows: FoldRows = { days: [], reasons: [], users: [] };
  return { state: foldItemEventsInto(start, events, rows), ...rows };
}

/**
 * foldItemEvents adding the item's rows to `into` (the rows of a whole consumer batch), returning its new
 * running state. No object or text per event beyond what a new row needs: while the item has few day rows (a
 * consumer batch holds an item's events of a few milliseconds) its rows are found by comparing day, supplier,
 * reason and user with the item's rows in `into`, so no key text, map or list is made per event or item; from
 * the ninth day row on (the rebuild refolds an item's whole history) by keys, as maps.
 */
export function foldItemEventsInto(
  start: WacState & { lastEventId: string },
  events: FoldEvent[],
  into: FoldRows,
): WacState & { lastEventId: string } {
  let state: WacState = { q: start.q, c: start.c };
  let lastEventId = start.lastEventId;
  const item = new ItemRows(into);
  let row: DayRow | undefined;
  for (const e of events) {
    const supplierKey = e.supplierId ?? NO_SUPPLIER;
    const applied =
      e.reversalUnitCost === undefined || e.reversalUnitCost === null
        ? applyWac(state, e.change, e.reason, e.unitCost ?? e.priceAtChange)
        : applyReversal(state, e.change, e.reason, e.reversalUnitCost);
    state = applied.state;
    if (row === undefined || row.day !== e.day || row.supplierKey !== supplierKey)
      row = item.day(e, supplierKey);
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

    const r = item.reason(e, supplierKey);
    r.entries += 1;
    r.itemName = e.itemName;
    if (e.change > 0) r.increase += e.change;
    else r.decrease -= e.change;

    item.user(e, supplierKey).entries += 1;
    lastEventId = e.id;
  }
  return { q: state.q, c: state.c, lastEventId };
}

/** Day rows an item may have before its rows are found by keys instead of by comparison (foldItemEventsInto). */
const ROWS_COMPARED = 8;

/** One item's rows in a FoldRows (those from the lengths it had when the item's fold started). */
class ItemRows {
  private readonly days0: number;
  private readonly reasons0: number;
  private readonly users0: number;
  private keyed?: { days: Map<string, DayRow>; reasons: Map<string, ReasonRow>; users: Map<string, UserRow> };

  constructor(private readonly into: FoldRows) {
    this.days0 = into.days.length;
    this.reasons0 = into.reasons.length;
    this.users0 = into.users.length;
  }

  day(e: FoldEvent, supplierKey: string): DayRow {
    const { days } = this.into;
    const keyed = this.keyed;
    const key = keyed ? `${e.day}|${supplierKey}` : '';
    if (keyed) {
      const held = keyed.days.get(key);
      if (held) return held;
    } else
      for (let i = this.days0; i < days.length; i++)
        if (days[i].day === e.day && days[i].supplierKey === supplierKey) return days[i];
    const row = newDayRow(e, supplierKey);
    days.push(row);
    if (keyed) keyed.days.set(key, row);
    else if (days.length - this.days0 > ROWS_COMPARED) this.keyed = this.keys();
    return row;
  }

  reason(e: FoldEvent, supplierKey: string): ReasonRow {
    const { reasons } = this.into;
    const keyed = this.keyed;
    const key = keyed ? `${e.day}|${supplierKey}|${e.reason}` : '';
    if (keyed) {
      const held = keyed.reasons.get(key);
      if (held) return held;
    } else
      for (let i = this.reasons0; i < reasons.length; i++) {
        const r = reasons[i];
        if (r.reason === e.reason && r.day === e.day && r.supplierKey === supplierKey) return r;
      }
    const r: ReasonRow = {
      itemId: e.itemId,
      day: e.day,
      supplierKey,
      reason: e.reason,
      itemName: e.itemName,
      entries: 0,
      increase: 0,
      decrease: 0,
    };
    reasons.push(r);
    keyed?.reasons.set(key, r);
    return r;
  }

  user(e: FoldEvent, supplierKey: string): UserRow {
    const { users } = this.into;
    const keyed = this.keyed;
    const key = keyed ? `${e.day}|${supplierKey}|${e.createdBy}` : '';
    if (keyed) {
      const held = keyed.users.get(key);
      if (held) return held;
    } else
      for (let i = this.users0; i < users.length; i++) {
        const u = users[i];
        if (u.createdBy === e.createdBy && u.day === e.day && u.supplierKey === supplierKey) return u;
      }
    const u: UserRow = { itemId: e.itemId, day: e.day, supplierKey, createdBy: e.createdBy, entries: 0 };
    users.push(u);
    keyed?.users.set(key, u);
    return u;
  }

  /** The item's rows so far by their keys. */
  private keys() {
    const { days, reasons, users } = this.into;
    return {
      days: new Map(days.slice(this.days0).map(d => [`${d.day}|${d.supplierKey}`, d])),
      reasons: new Map(reasons.slice(this.reasons0).map(r => [`${r.day}|${r.supplierKey}|${r.reason}`, r])),
      users: new Map(users.slice(this.users0).map(u => [`${u.day}|${u.supplierKey}|${u.createdBy}`, u])),
    };
  }
}

const newDayRow = (e: FoldEvent, supplierKey: string): DayRow => ({
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
});
