import type { BinaryCopyWriter } from './binary-copy.js';
import { toUnits } from '../decimal.js';
import { foldItemEvents, type DayRow, type FoldEvent, type ReasonRow } from '../fold/fold-item-events.js';
import type { WacState } from '../wac.js';
import type { SqlRun } from '../../shared/native-transaction.js';

const EVENTS_PER_READ = 20_000;
const EPOCH_2000 = Date.UTC(2000, 0, 1);

const SUMS = [
  'entries',
  'qtyIn',
  'qtyOut',
  'priceSum',
  'purchasesQty',
  'purchasesCost',
  'returnsInQty',
  'returnsInCost',
  'cogsQty',
  'cogsCost',
  'writeOffQty',
  'writeOffCost',
] as const;

const uuid = (id: string) => Buffer.from(id.replaceAll('-', ''), 'hex');
const dayNumber = (day: string) => Math.round((Date.parse(`${day}T00:00:00Z`) - EPOCH_2000) / 86_400_000);

/**
 * The day and reason rows of the items whose events went back to days the rebuild's stream had already written
 * (RollupFold's revisited items): each item's events are read again, in event-id order, from `source` (the
 * rebuild's event source, a statement text with `$1` the item ids) on the rebuild's snapshot and folded whole
 * with the consumer's own fold (fold-item-events.ts), in bounded reads whose results are merged as one fold
 * would give them; then written with their running counts.
 */
export async function refoldItems(
  sql: SqlRun,
  source: string,
  itemIds: string[],
  dayRows: BinaryCopyWriter,
  reasonRows: BinaryCopyWriter,
): Promise<void> {
  if (itemIds.length === 0) return;
  await sql(`declare rebuild_refold no scroll cursor for ${source} order by item_id, event_id`, [itemIds]);
  let itemId: string | null = null;
  let state: WacState & { lastEventId: string } = { q: 0, c: 0n, lastEventId: '0' };
  let days = new Map<string, DayRow>();
  let reasons = new Map<string, ReasonRow>();
  let events: FoldEvent[] = [];
  const fold = () => {
    const result = foldItemEvents(state, events);
    state = result.state;
    events = [];
    for (const row of result.days) {
      const key = `${row.day}|${row.supplierKey}`;
      const held = days.get(key);
      if (!held) days.set(key, row);
      else {
        // Sums add up; the rest follows the later row (later events).
        const merged: Record<string, unknown> = { ...row };
        for (const sum of SUMS) merged[sum] = (held[sum] as any) + (row[sum] as any);
        days.set(key, merged as unknown as DayRow);
      }
    }
    for (const row of result.reasons) {
      const key = `${row.day}|${row.supplierKey}|${row.reason}`;
      const held = reasons.get(key);
      if (!held) reasons.set(key, row);
      else {
        held.entries += row.entries;
        held.increase += row.increase;
        held.decrease += row.decrease;
        held.itemName = row.itemName;
      }
    }
  };
  const write = () => {
    if (events.length > 0) fold();
    const running = new Map<string, number>();
    for (const row of [...days.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))) {
      const cum = (running.get(row.supplierKey) ?? 0) + row.entries;
      running.set(row.supplierKey, cum);
      writeDayRow(dayRows, row, cum);
    }
    for (const row of reasons.values()) writeReasonRow(reasonRows, row);
    days = new Map();
    reasons = new Map();
    state = { q: 0, c: 0n, lastEventId: '0' };
  };
  for (;;) {
    const rows = await sql<any>(`fetch ${EVENTS_PER_READ} from rebuild_refold`);
    if (rows.length === 0) break;
    for (const r of rows) {
      if (r.item_id !== itemId) {
        if (itemId !== null) write();
        itemId = r.item_id;
      }
      events.push({
        id: String(r.event_id),
        itemId: r.item_id,
        itemName: r.item_name,
        supplierId: r.supplier_id,
        supplierName: r.supplier_name,
        day: r.day_text,
        change: Number(r.change),
        quantityAfter: Number(r.quantity_after),
        reason: r.reason,
        priceAtChange: String(r.price),
        createdBy: '',
        ...(r.reversal_unit_cost === null ? {} : { reversalUnitCost: String(r.reversal_unit_cost) }),
        ...(r.unit_cost === null ? {} : { unitCost: String(r.unit_cost) }),
      });
    }
    if (events.length >= EVENTS_PER_READ) fold();
    if (dayRows.pressure || reasonRows.pressure) await Promise.all([dayRows.drained(), reasonRows.drained()]);
  }
  if (itemId !== null) write();
  await sql('close rebuild_refold');
}

function writeDayRow(w: BinaryCopyWriter, r: DayRow, cum: number): void {
  w.row(23);
  w.uuid(uuid(r.itemId), 0);
  w.date(dayNumber(r.day));
  w.uuid(uuid(r.supplierKey), 0);
  if (r.supplierName === null) w.null();
  else w.text(Buffer.from(r.supplierName));
  w.text(Buffer.from(r.itemName));
  w.int4(r.entries);
  w.int8(r.qtyIn);
  w.int8(r.qtyOut);
  w.numeric(r.priceSum);
  w.int4(r.closingQuantity);
  w.numeric(toUnits(r.closingPrice));
  w.int4(r.wacQ);
  w.numeric(r.wacC);
  w.int8(r.purchasesQty);
  w.numeric(r.purchasesCost);
  w.int8(r.returnsInQty);
  w.numeric(r.returnsInCost);
  w.int8(r.cogsQty);
  w.numeric(r.cogsCost);
  w.int8(r.writeOffQty);
  w.numeric(r.writeOffCost);
  w.int8(Number(r.lastEventId));
  w.int8(cum);
}

function writeReasonRow(w: BinaryCopyWriter, r: ReasonRow): void {
  w.row(8);
  w.uuid(uuid(r.itemId), 0);
  w.date(dayNumber(r.day));
  w.uuid(uuid(r.supplierKey), 0);
  w.text(Buffer.from(r.reason));
  w.text(Buffer.from(r.itemName));
  w.int4(r.entries);
  w.int8(r.increase);
  w.int8(r.decrease);
}
