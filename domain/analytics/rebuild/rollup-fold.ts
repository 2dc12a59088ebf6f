import type { BinaryCopyWriter } from './binary-copy.js';
import { BUCKET_SUMS, WAC_BUCKET_COLUMNS } from '../fold/activity-rollups.js';
import { ByteDictionary } from './byte-dictionary.js';
import { UuidDictionary } from '../../shared/uuid-dictionary.js';
import { formatUnits } from '../decimal.js';
import { GroupSums } from './group-sums.js';
import { applyReversal, applyWac, wacBooking, type WacMove } from '../wac.js';

/** Columns of the rows the fold writes, in the order it writes them. */
export const DAY_COPY_COLUMNS = [
  'item_id',
  'day',
  'supplier_key',
  'supplier_name',
  'item_name',
  'entries',
  'qty_in',
  'qty_out',
  'price_sum',
  'closing_quantity',
  'closing_price',
  'wac_q',
  'wac_c',
  ...WAC_BUCKET_COLUMNS,
  'last_event_id',
  'cum_entries',
];
export const REASON_COPY_COLUMNS = [
  'item_id',
  'day',
  'supplier_key',
  'reason',
  'item_name',
  'entries',
  'increase',
  'decrease',
];
export const USER_COPY_COLUMNS = ['day', 'supplier_key', 'created_by', 'slot', 'entries'];
export const ITEM_COPY_COLUMNS = ['item_id', 'wac_q', 'wac_c', 'last_event_id'];
export const SUPPLIER_DAY_COPY_COLUMNS = ['day', 'supplier_key', ...BUCKET_SUMS];
export const REASON_SUPPLIER_COPY_COLUMNS = [
  'supplier_key',
  'day',
  'reason',
  'slot',
  'entries',
  'increase',
  'decrease',
];
export const PAIR_COPY_COLUMNS = [
  'item_id',
  'supplier_key',
  'first_day',
  'last_day',
  'entries',
  'item_name',
  'last_event_id',
];

/**
 * One event as the fold takes it. `item`, `supplier` (0: none), `itemName`, `supplierName` (-1: none), `reason`
 * and `user` are ids of the fold's dictionaries; `day` counts days from 2000-01-01; `price` and `reversal` (the
 * unit cost of a reversal, else NaN) and `unitCost` (the unit cost stock in enters the average at when it is
 * not the price: a receipt's, else NaN) are units of 1e-4. A reader fills one record per scan (rollupEvent) and
 * passes it for every event, so the hot loop allocates nothing.
 */
export interface RollupEvent {
  item: number;
  eventId: number;
  day: number;
  supplier: number;
  supplierName: number;
  itemName: number;
  change: number;
  quantityAfter: number;
  reason: number;
  price: number;
  reversal: number;
  user: number;
  unitCost: number;
}

/** A record to fill and pass to RollupFold.step, event after event. */
export const rollupEvent = (): RollupEvent => ({
  item: 0,
  eventId: 0,
  day: 0,
  supplier: 0,
  supplierName: -1,
  itemName: 0,
  change: 0,
  quantityAfter: 0,
  reason: 0,
  price: 0,
  reversal: NaN,
  user: 0,
  unitCost: NaN,
});

const SAFE = Number.MAX_SAFE_INTEGER;
/** No day (no open run, nothing written yet). */
const NONE = -0x80000000;
/** Suppliers and users per user-row key (key = supplier * USERS + user). */
const USERS = 1 << 26;
/** Suppliers per (item, supplier) running-count key. */
const SUPPLIERS = 1 << 21;
/** Reasons per (day, supplier, reason) key of the reason sums. */
const REASONS = 1 << 10;

// The fields of an item's open day row (one run of its events on one day with one supplier), F per item.
const ENTRIES = 0;
const QTY_IN = 1;
const QTY_OUT = 2;
const PRICE_SUM = 3;
const PURCHASES_QTY = 4;
const RETURNS_IN_QTY = 6;
const COGS_QTY = 8;
const WRITE_OFF_QTY = 10;
const CLOSING_QUANTITY = 12;
const CLOSING_PRICE = 13;
const WAC_Q = 14;
const WAC_C = 15;
const LAST_EVENT = 16;
const ITEM_NAME = 17;
const SUPPLIER_NAME = 18;
const F = 19;
/** A WAC bucket's quantity field; its cost is the next one. */
const BUCKETS: Record<WacMove['bucket'], number> = {
  purchases: PURCHASES_QTY,
  returnsIn: RETURNS_IN_QTY,
  cogs: COGS_QTY,
  writeOff: WRITE_OFF_QTY,
};

/**
 * An (item, supplier) pair: the running count of its rows as written (`running`, `lastDay`, `tree`) and its
 * totals over every event (the pair totals' row: `entries`, the first and last day, and the item name and event
 * id of its latest event by day then event id).
 */
interface Pair {
  running: number;
  lastDay: number;
  /** Entries by day (a Fenwick tree over the days); null without one (the memory budget). */
  tree: Float64Array | null | undefined;
  entries: number;
  firstDay: number;
  latestDay: number;
  latestName: number;
  latestEvent: number;
}

const newPair = (): Pair => ({
  running: 0,
  lastDay: NONE,
  tree: undefined,
  entries: 0,
  firstDay: Infinity,
  latestDay: NONE,
  latestName: 0,
  latestEvent: 0,
});

/** Memory for the pairs' day indexes (beyond it, pairs out of day order are folded again, item by item). */
const INDEX_BUDGET = 32 * 1024 * 1024;

/** The sum of a Fenwick tree's values 0..i. */
function prefix(tree: Float64Array, i: number): number {
  let sum = 0;
  for (let k = i + 1; k > 0; k -= k & -k) sum += tree[k];
  return sum;
}

/** Integer division of safe integers num >= 0, den > 0, rounded half up (decimal.ts divRound). */
function divRound(num: number, den: number): number {
  let q = Math.floor(num / den);
  let r = num - q * den;
  while (r < 0) {
    q--;
    r += den;
  }
  while (r >= den) {
    q++;
    r -= den;
  }
  return 2 * r >= den ? q + 1 : q;
}

/**
 * The rebuild's fold of every event (in event-id order) into the day, reason and user rows and the items' final
 * WAC state, written as binary COPY rows as soon as they are complete, and into the sums over every closed run
 * (pair totals, supplier day buckets, reason rows per supplier), written at the end. Items, suppliers, names,
 * reasons and users are dense ids (UuidDictionary, ByteDictionary); each item's running state and its open day
 * row live in typed arrays, so an event is folded without allocating. Amounts are integers in units of 1e-4 held as numbers while they are
 * safe integers; an amount that is not goes to a bigint (the arithmetic of wac.ts, exactly).
 *
 * An item's day row (and its reason rows) is written when the item's next event is on another day or supplier,
 * or when the stream has moved two days past it: rows go out about in day order, as readers scan them. An item
 * whose events go back to a day (or a day and supplier) already written is "revisited": its rows are left to
 * `refoldItems`, which folds that item's events again whole; its WAC state here stays exact (it is folded in
 * event order regardless of days). User rows are counted per day and written once the stream is two days past
 * it; events of days already written go to late rows, merged by the caller (`lateDays`).
 */
export class RollupFold {
  readonly items = new UuidDictionary();
  readonly suppliers = new UuidDictionary();
  readonly names = new ByteDictionary();
  readonly reasons = new ByteDictionary();
  readonly users = new ByteDictionary();
  events = 0;

  private capacity = 0;
  private q = new Float64Array(0);
  private c = new Float64Array(0);
  private lastEvent = new Float64Array(0);
  private runDay = new Int32Array(0);
  private runSupplier = new Int32Array(0);
  private revisited = new Uint8Array(0);
  /** Each item's (item, supplier) pairs: its first supplier's at its slot, the others by key. */
  private readonly firstPairs: (Pair | undefined)[] = [];
  private readonly firstSuppliers: number[] = [];
  private readonly otherPairs = new Map<number, Pair>();
  private indexBytes = 0;
  /** Day rows written twice (item slot, day, supplier), to be merged. */
  readonly duplicates: number[] = [];
  private readonly dirty = new Set<number>();
  private row = new Float64Array(0);
  /** Amounts that are not safe integers, by their index in `c` (negative: -1 - slot) or `row`. */
  private readonly big = new Map<number, bigint>();
  private reasonStride = 16;
  private reasonEntries = new Float64Array(0);
  private reasonIncrease = new Float64Array(0);
  private reasonDecrease = new Float64Array(0);
  private reasonName = new Int32Array(0);
  /**
   * Each reason's wacBooking as bucket fields and signs, four per reason (index: reason * 4, plus 1 when the
   * original move is inbound, plus 2 for a reversal).
   */
  private readonly bookingBucket: number[] = [];
  private readonly bookingSign: number[] = [];
  private readonly running = new Map<number, number>();
  /** The supplier buckets' sums (BUCKET_SUMS) per day and supplier (key day * SUPPLIERS + supplier). */
  private readonly supplierDays = new GroupSums(BUCKET_SUMS.length);
  /** Entries, increase and decrease per day, supplier and reason (key (day * SUPPLIERS + supplier) * REASONS + reason). */
  private readonly reasonDays = new GroupSums(3);
  private maxDay = NONE;
  private writtenBefore = NONE;
  private readonly userDays = new Map<number, Map<number, number>>();
  private readonly lateUsers = new Map<number, Map<number, number>>();

  /**
   * `firstDay` and `days`: the range of days of the events (from 2000-01-01), for the pairs' day indexes;
   * `duplicateReasonRows` takes the reason rows of a day row written twice, with the run's last event id.
   */
  constructor(
    private readonly dayRows: BinaryCopyWriter,
    private readonly reasonRows: BinaryCopyWriter,
    private readonly userRows: BinaryCopyWriter,
    private readonly duplicateReasonRows: BinaryCopyWriter,
    private readonly firstDay: number,
    private readonly days: number,
  ) {
    // The nil uuid is the key of "no supplier" (supplier id 0).
    this.suppliers.idAt(Buffer.alloc(16), 0);
  }

  /** Items whose rows refoldItems must write (their uuids). */
  revisitedItems(): string[] {
    const ids: string[] = [];
    for (let slot = 0; slot < this.items.size; slot++)
      if (this.revisited[slot]) ids.push(this.items.text(slot));
    return ids;
  }

  /** Days that got user rows after theirs were written (to be merged). */
  lateDays(): number[] {
    return [...this.lateUsers.keys()];
  }

  /**
   * Folds one event (the caller may reuse the record for the next: the fold keeps nothing of it).
   */
  step(event: RollupEvent): void {
    const {
      item,
      eventId,
      day,
      supplier,
      supplierName,
      itemName,
      change,
      quantityAfter,
      reason,
      price,
      reversal,
      unitCost,
    } = event;
    this.events++;
    if (item >= this.capacity) this.grow(item);
    if (reason >= this.reasonStride) this.widenReasons();
    if (reason >= REASONS || supplier >= SUPPLIERS)
      throw new Error('report rebuild: too many reasons or suppliers');
    while (reason * 4 >= this.bookingBucket.length)
      this.addBookings(this.reasons.texts[this.bookingBucket.length / 4]);
    if (day > this.maxDay) this.advance(day);
    this.countUser(day, supplier, event.user);

    const open = this.runDay[item];
    if (open !== day || this.runSupplier[item] !== supplier) {
      if (open !== NONE) this.close(item);
      this.openRun(item, day, supplier);
    }

    // The WAC step (wac.ts), on numbers while every amount is a safe integer.
    const q = this.q[item];
    const c = this.c[item];
    const n = change > 0 ? change : -change;
    let nextQ = q;
    let nextC = c;
    let bucket = -1;
    let moveQty = 0;
    let moveCost = 0;
    let exact = change === 0;
    if (change !== 0 && c === c && q * c >= 0) {
      const held = q * c;
      const reversing = reversal === reversal;
      if (!reversing && change < 0) {
        const cost = c * n;
        if (cost <= SAFE) {
          nextQ = Math.max(0, q - n);
          moveCost = cost;
          exact = true;
        }
      } else {
        // Stock in at its unit cost (else its price), or a reversal at its original's unit cost.
        const cost = n * (reversing ? reversal : unitCost === unitCost ? unitCost : price);
        if (held <= SAFE && cost >= 0 && cost <= SAFE && held + cost <= SAFE) {
          if (change > 0) {
            nextC = divRound(held + cost, q + n);
            nextQ = q + n;
          } else {
            nextQ = Math.max(0, q + change);
            const rest = held - cost;
            nextC = nextQ === 0 ? c : rest <= 0 ? 0 : divRound(rest, nextQ);
          }
          moveCost = cost;
          exact = true;
        }
      }
      if (exact) {
        const at = reason * 4 + (change > 0 !== reversing ? 1 : 0) + (reversing ? 2 : 0);
        const sign = this.bookingSign[at];
        bucket = this.bookingBucket[at];
        moveQty = sign * n;
        moveCost = sign * moveCost;
      }
    }
    let bigCost: bigint | undefined;
    if (!exact) {
      const state = { q, c: BigInt(this.cOf(item)) };
      const text = this.reasons.texts[reason];
      const applied =
        reversal !== reversal
          ? applyWac(state, change, text, formatUnits(BigInt(unitCost === unitCost ? unitCost : price)))
          : applyReversal(state, change, text, formatUnits(BigInt(reversal)));
      nextQ = applied.state.q;
      nextC = this.setC(item, applied.state.c);
      if (applied.move) {
        bucket = BUCKETS[applied.move.bucket];
        moveQty = applied.move.qty;
        bigCost = applied.move.cost;
      }
    } else if (nextC === nextC) {
      this.c[item] = nextC;
      if (this.big.size > 0) this.big.delete(-1 - item);
    }
    this.q[item] = nextQ;
    this.lastEvent[item] = eventId;

    const at = item * F;
    const row = this.row;
    row[at + ENTRIES] += 1;
    if (change > 0) row[at + QTY_IN] += change;
    else row[at + QTY_OUT] -= change;
    this.addAmount(at + PRICE_SUM, price);
    row[at + CLOSING_QUANTITY] = quantityAfter;
    row[at + CLOSING_PRICE] = price;
    row[at + WAC_Q] = nextQ;
    if (nextC === nextC) {
      row[at + WAC_C] = nextC;
      if (this.big.size > 0) this.big.delete(at + WAC_C);
    } else {
      row[at + WAC_C] = NaN;
      this.big.set(at + WAC_C, this.big.get(-1 - item)!);
    }
    row[at + LAST_EVENT] = eventId;
    row[at + ITEM_NAME] = itemName;
    row[at + SUPPLIER_NAME] = supplierName;
    if (bucket >= 0) {
      row[at + bucket] += moveQty;
      if (bigCost === undefined) this.addAmount(at + bucket + 1, moveCost);
      else this.addBigAmount(at + bucket + 1, bigCost);
    }

    const r = item * this.reasonStride + reason;
    this.reasonEntries[r] += 1;
    this.reasonName[r] = itemName;
    if (change > 0) this.reasonIncrease[r] += change;
    else this.reasonDecrease[r] -= change;
  }

  /** Writes every open row and the user rows (the late ones last). */
  finish(): void {
    for (let item = 0; item < this.items.size; item++) if (this.runDay[item] !== NONE) this.close(item);
    this.writeUsers(Infinity);
    for (const [day, counts] of [...this.lateUsers].sort((a, b) => a[0] - b[0]))
      this.writeUserDay(day, counts);
  }

  /** Writes the items' running states (analytics_item rows) after the last event. */
  writeItems(w: BinaryCopyWriter): void {
    for (let item = 0; item < this.items.size; item++) {
      w.row(ITEM_COPY_COLUMNS.length);
      w.uuid(this.items.bytes, 16 * item);
      w.int4(this.q[item]);
      w.numeric(this.cOf(item));
      w.int8(this.lastEvent[item]);
    }
  }

  /** Adds a closing run's day row (at `at` of `row`) to the supplier buckets' sums of its day and supplier. */
  private addSupplierDay(at: number, key: number): void {
    const sums = this.supplierDays;
    const group = sums.group(key);
    const row = this.row;
    sums.add(group, 0, row[at + ENTRIES]);
    sums.add(group, 1, row[at + QTY_IN]);
    sums.add(group, 2, row[at + QTY_OUT]);
    for (let bucket = PURCHASES_QTY, field = 3; bucket <= WRITE_OFF_QTY; bucket += 2, field += 2) {
      sums.add(group, field, row[at + bucket]);
      sums.add(group, field + 1, this.amount(at + bucket + 1));
    }
  }

  /** Writes the supplier buckets of the days (analytics_supplier_day rows, slot 0) after the last event. */
  writeSupplierDays(days: BinaryCopyWriter): void {
    for (let group = 0; group < this.supplierDays.size; group++) {
      const [day, supplier] = keyOf(this.supplierDays.keys[group], SUPPLIERS);
      days.row(SUPPLIER_DAY_COPY_COLUMNS.length);
      days.date(day);
      days.uuid(this.suppliers.bytes, 16 * supplier);
      for (let field = 0; field < BUCKET_SUMS.length; field++) {
        const sum = this.supplierDays.get(group, field);
        // The costs are numeric; the counts and quantities int8.
        if (field >= 3 && field % 2 === 0) days.numeric(sum);
        else days.int8(Number(sum));
      }
    }
  }

  /** Writes the reason sums per supplier and day (analytics_reason_supplier_day rows, slot 0) after the last event. */
  writeReasonDays(reasons: BinaryCopyWriter): void {
    for (let group = 0; group < this.reasonDays.size; group++) {
      const [daySupplier, reason] = keyOf(this.reasonDays.keys[group], REASONS);
      const [day, supplier] = keyOf(daySupplier, SUPPLIERS);
      reasons.row(REASON_SUPPLIER_COPY_COLUMNS.length);
      reasons.uuid(this.suppliers.bytes, 16 * supplier);
      reasons.date(day);
      reasons.text(this.reasons.values[reason]);
      reasons.int2(0);
      for (let field = 0; field < 3; field++) reasons.int8(Number(this.reasonDays.get(group, field)));
    }
  }

  /** Writes the pair totals (analytics_item_supplier rows) after the last event. */
  writePairs(w: BinaryCopyWriter): void {
    const write = (item: number, supplier: number, pair: Pair) => {
      w.row(PAIR_COPY_COLUMNS.length);
      w.uuid(this.items.bytes, 16 * item);
      w.uuid(this.suppliers.bytes, 16 * supplier);
      w.date(pair.firstDay);
      w.date(pair.latestDay);
      w.int8(pair.entries);
      w.text(this.names.values[pair.latestName]);
      w.int8(pair.latestEvent);
    };
    for (let item = 0; item < this.items.size; item++) {
      const pair = this.firstPairs[item];
      if (pair) write(item, this.firstSuppliers[item], pair);
    }
    for (const [key, pair] of this.otherPairs) {
      const item = Math.floor(key / SUPPLIERS);
      write(item, key - item * SUPPLIERS, pair);
    }
  }

  private cOf(item: number): number | bigint {
    const c = this.c[item];
    return c === c ? c : this.big.get(-1 - item)!;
  }

  /** Stores a bigint WAC cost; returns it as a number when it is safe, else NaN. */
  private setC(item: number, c: bigint): number {
    if (c >= -BigInt(SAFE) && c <= BigInt(SAFE)) {
      this.c[item] = Number(c);
      this.big.delete(-1 - item);
      return Number(c);
    }
    this.c[item] = NaN;
    this.big.set(-1 - item, c);
    return NaN;
  }

  private addAmount(at: number, value: number): void {
    const sum = this.row[at] + value;
    if (sum <= SAFE && sum >= -SAFE) this.row[at] = sum;
    else this.addBigAmount(at, BigInt(value));
  }

  private addBigAmount(at: number, value: bigint): void {
    const held = this.row[at];
    const sum = (held === held ? BigInt(held) : this.big.get(at)!) + value;
    if (sum <= BigInt(SAFE) && sum >= -BigInt(SAFE)) {
      this.row[at] = Number(sum);
      this.big.delete(at);
    } else {
      this.row[at] = NaN;
      this.big.set(at, sum);
    }
  }

  private amount(at: number): number | bigint {
    const value = this.row[at];
    return value === value ? value : this.big.get(at)!;
  }

  private openRun(item: number, day: number, supplier: number): void {
    this.runDay[item] = day;
    this.runSupplier[item] = supplier;
    const at = item * F;
    this.row.fill(0, at, at + F);
    for (const field of [
      PRICE_SUM,
      WAC_C,
      PURCHASES_QTY + 1,
      RETURNS_IN_QTY + 1,
      COGS_QTY + 1,
      WRITE_OFF_QTY + 1,
    ])
      if (this.big.size > 0) this.big.delete(at + field);
  }

  /** Writes an item's open row and its reason rows (unless the item is revisited), and closes the run. */
  private close(item: number): void {
    const day = this.runDay[item];
    const supplier = this.runSupplier[item];
    this.runDay[item] = NONE;
    const stride = this.reasonStride;
    const reasons = this.reasons.size;
    const at = item * F;
    const row = this.row;
    const pair = this.pairOf(item, supplier);
    // Runs of a pair close in event order: the latest of a day is the last closed.
    pair.entries += row[at + ENTRIES];
    if (day < pair.firstDay) pair.firstDay = day;
    if (day >= pair.latestDay) {
      pair.latestDay = day;
      pair.latestName = row[at + ITEM_NAME];
      pair.latestEvent = row[at + LAST_EVENT];
    }
    this.addSupplierDay(at, day * SUPPLIERS + supplier);
    const placed = this.revisited[item] === 1 ? null : this.place(pair, item, day, row[at + ENTRIES]);
    const skip = placed === null;
    const duplicate = placed !== null && placed < 0;
    const uuids = this.items.bytes;
    const supplierKeys = this.suppliers.bytes;
    for (let reason = 0, r = item * stride; reason < reasons; reason++, r++) {
      const entries = this.reasonEntries[r];
      if (entries === 0) continue;
      const sums = this.reasonDays;
      const group = sums.group((day * SUPPLIERS + supplier) * REASONS + reason);
      sums.add(group, 0, entries);
      sums.add(group, 1, this.reasonIncrease[r]);
      sums.add(group, 2, this.reasonDecrease[r]);
      if (!skip) {
        const w = duplicate ? this.duplicateReasonRows : this.reasonRows;
        w.row(duplicate ? REASON_COPY_COLUMNS.length + 1 : REASON_COPY_COLUMNS.length);
        w.uuid(uuids, 16 * item);
        w.date(day);
        w.uuid(supplierKeys, 16 * supplier);
        w.text(this.reasons.values[reason]);
        w.text(this.names.values[this.reasonName[r]]);
        w.int4(entries);
        w.int8(this.reasonIncrease[r]);
        w.int8(this.reasonDecrease[r]);
        if (duplicate) w.int8(row[at + LAST_EVENT]);
      }
      this.reasonEntries[r] = 0;
      this.reasonIncrease[r] = 0;
      this.reasonDecrease[r] = 0;
    }
    if (skip) return;
    const running = duplicate ? 0 : placed;
    if (duplicate) this.duplicates.push(item, day, supplier);
    const w = this.dayRows;
    w.row(DAY_COPY_COLUMNS.length);
    w.uuid(uuids, 16 * item);
    w.date(day);
    w.uuid(supplierKeys, 16 * supplier);
    const supplierName = row[at + SUPPLIER_NAME];
    if (supplierName < 0) w.null();
    else w.text(this.names.values[supplierName]);
    w.text(this.names.values[row[at + ITEM_NAME]]);
    w.int4(row[at + ENTRIES]);
    w.int8(row[at + QTY_IN]);
    w.int8(row[at + QTY_OUT]);
    w.numeric(this.amount(at + PRICE_SUM));
    w.int4(row[at + CLOSING_QUANTITY]);
    w.numeric(row[at + CLOSING_PRICE]);
    w.int4(row[at + WAC_Q]);
    w.numeric(this.amount(at + WAC_C));
    for (let bucket = PURCHASES_QTY; bucket <= WRITE_OFF_QTY; bucket += 2) {
      w.int8(row[at + bucket]);
      w.numeric(this.amount(at + bucket + 1));
    }
    w.int8(row[at + LAST_EVENT]);
    w.int8(running);
  }

  /**
   * Places a day row about to be written in its (item, supplier) pair: returns its running count (the pair's
   * entries up to its day), -1 when the pair already has a row of that day (a duplicate, to be merged), or null
   * when the item must be folded again (refoldItems). A pair's entries by day are in a Fenwick tree over the
   * events' days, so a row written after rows of later days gets its exact running count; those later rows' counts
   * are then stale, and the pair "dirty" (dirtyItems: recounted in SQL). Pairs whose trees would pass the memory
   * budget keep a plain running count, and their item is folded again if its rows come out of day order.
   */
  private place(pair: Pair, item: number, day: number, entries: number): number | null {
    const i = day - this.firstDay;
    if (pair.tree === undefined) {
      const bytes = 8 * (this.days + 1);
      pair.tree = this.indexBytes + bytes <= INDEX_BUDGET ? new Float64Array(this.days + 1) : null;
      if (pair.tree) this.indexBytes += bytes;
    }
    if (pair.tree === null || i < 0 || i >= this.days) {
      if (day <= pair.lastDay || pair.tree) {
        this.revisited[item] = 1;
        return null;
      }
      pair.lastDay = day;
      return (pair.running += entries);
    }
    const tree = pair.tree;
    for (let k = i + 1; k < tree.length; k += k & -k) tree[k] += entries;
    if (day > pair.lastDay) {
      // After every row of the pair so far: its running count is the pair's.
      pair.lastDay = day;
      return (pair.running += entries);
    }
    const present = prefix(tree, i) - entries - prefix(tree, i - 1) > 0;
    this.dirty.add(item);
    pair.running += entries;
    return present ? -1 : prefix(tree, i);
  }

  private pairOf(item: number, supplier: number): Pair {
    const first = this.firstSuppliers[item];
    if (first === undefined || first === supplier) {
      this.firstSuppliers[item] = supplier;
      return (this.firstPairs[item] ??= newPair());
    }
    const key = item * SUPPLIERS + supplier;
    let pair = this.otherPairs.get(key);
    if (!pair) this.otherPairs.set(key, (pair = newPair()));
    return pair;
  }

  /** Items with a pair whose running counts must be recounted (rows written out of day order). */
  dirtyItems(): string[] {
    return [...this.dirty].filter(item => !this.revisited[item]).map(item => this.items.text(item));
  }

  /** The stream reached `day`: rows and user counts of days before the day before are written. */
  private advance(day: number): void {
    this.maxDay = day;
    const before = day - 1;
    if (before <= this.writtenBefore) return;
    for (let item = 0; item < this.items.size && item < this.capacity; item++) {
      const open = this.runDay[item];
      if (open !== NONE && open < before) this.close(item);
    }
    this.writeUsers(before);
    this.writtenBefore = before;
  }

  private countUser(day: number, supplier: number, user: number): void {
    if (supplier >= USERS || user >= USERS) throw new Error('report rebuild: too many suppliers or users');
    const days = day < this.writtenBefore ? this.lateUsers : this.userDays;
    let counts = days.get(day);
    if (!counts) days.set(day, (counts = new Map()));
    const key = supplier * USERS + user;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }

  private writeUsers(before: number): void {
    const days = [...this.userDays.keys()].filter(day => day < before).sort((a, b) => a - b);
    for (const day of days) {
      this.writeUserDay(day, this.userDays.get(day)!);
      this.userDays.delete(day);
    }
  }

  private writeUserDay(day: number, counts: Map<number, number>): void {
    const w = this.userRows;
    for (const [key, entries] of counts) {
      const supplier = Math.floor(key / USERS);
      w.row(USER_COPY_COLUMNS.length);
      w.date(day);
      w.uuid(this.suppliers.bytes, 16 * supplier);
      w.text(this.users.values[key - supplier * USERS]);
      w.int2(0);
      w.int4(entries);
    }
  }

  private grow(item: number): void {
    let capacity = Math.max(1024, this.capacity * 2);
    while (capacity <= item) capacity *= 2;
    const widen = <T extends Float64Array | Int32Array | Uint8Array>(from: T, to: T, fill?: number) => {
      if (fill !== undefined) to.fill(fill);
      to.set(from);
      return to;
    };
    this.q = widen(this.q, new Float64Array(capacity));
    this.c = widen(this.c, new Float64Array(capacity));
    this.lastEvent = widen(this.lastEvent, new Float64Array(capacity));
    this.runDay = widen(this.runDay, new Int32Array(capacity), NONE);
    this.runSupplier = widen(this.runSupplier, new Int32Array(capacity));
    this.revisited = widen(this.revisited, new Uint8Array(capacity));
    this.row = widen(this.row, new Float64Array(capacity * F));
    this.capacity = capacity;
    this.reasonArrays(this.reasonStride);
  }

  /** The bookings of the next reason (see bookingBucket). */
  private addBookings(reason: string): void {
    for (const reversal of [false, true])
      for (const originalInbound of [false, true]) {
        const { bucket, sign } = wacBooking(reason, originalInbound, reversal);
        this.bookingBucket.push(BUCKETS[bucket]);
        this.bookingSign.push(sign);
      }
  }

  private widenReasons(): void {
    let stride = this.reasonStride;
    while (stride <= this.reasons.size) stride *= 2;
    this.reasonArrays(stride);
  }

  /** (Re)lays out the per-item reason counts with `stride` reasons per item. */
  private reasonArrays(stride: number): void {
    const old = this.reasonStride;
    const relay = <T extends Float64Array | Int32Array>(from: T, to: T) => {
      const items = Math.min(from.length / old, this.capacity);
      for (let item = 0; item < items; item++)
        to.set(from.subarray(item * old, item * old + old), item * stride);
      return to;
    };
    const size = this.capacity * stride;
    this.reasonEntries = relay(this.reasonEntries, new Float64Array(size));
    this.reasonIncrease = relay(this.reasonIncrease, new Float64Array(size));
    this.reasonDecrease = relay(this.reasonDecrease, new Float64Array(size));
    this.reasonName = relay(this.reasonName, new Int32Array(size));
    this.reasonStride = stride;
  }
}

/** A key (high * per + low) as [high, low]. */
function keyOf(key: number, per: number): [number, number] {
  const low = ((key % per) + per) % per;
  return [(key - low) / per, low];
}
