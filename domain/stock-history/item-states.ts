import type { Drift, DriftKind } from './drift.js';

/** Drift reports kept per item and kind (the entry ids of the first ones). */
const MAX_ENTRY_IDS = 20;

/** A uuid's 16 bytes as four 32-bit words, mixed into a table index. */
const hash = (a: number, b: number, c: number, d: number) =>
  Math.imul(Math.imul(Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ b, 0xc2b2ae35) ^ c, 0x27d4eb2f) ^ d;

const uuidBytes = (id: string) => Buffer.from(id.replaceAll('-', ''), 'hex');

const formatUuid = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/**
 * What the history says of each item so far, in event order, for the integrity check. Items get dense slots from
 * an open-addressing table keyed by their uuid's bytes, and their running state lives in typed arrays: a history
 * entry is looked up and applied without allocating (no uuid string, no row object), so a scan of millions of
 * entries does not churn the worker's small young generation. Memory follows the number of items.
 */
export class ItemStates {
  /** Slot + 1 per table cell, 0 when empty; twice as many cells as slots at least. */
  private table = new Int32Array(2048);
  /** Each slot's uuid as four 32-bit words. */
  private keys = new Int32Array(4 * 1024);
  /** Each slot's item id (uuid text). */
  readonly ids: string[] = [];
  /** Sum of the changes so far. */
  private sums = new Float64Array(1024);
  /** The last step's quantityAfter; NaN before the first step. */
  private afters = new Float64Array(1024);
  /** The last history entry's id; NaN before the first. */
  private entryIds = new Float64Array(1024);
  /** The last step's unit price; null when it is a history entry's (read for the last entries only, at the end). */
  readonly lastPrice: (string | null)[] = [];
  /** Drift found, per slot and kind, in the order found. */
  private readonly found = new Map<number, Map<DriftKind, Drift>>();

  get size(): number {
    return this.ids.length;
  }

  /** The slot of the item whose uuid is the 16 bytes at `offset`, added when new. */
  slotAt(bytes: Buffer, offset: number): number {
    const slot = this.table[this.cellAt(bytes, offset)] - 1;
    return slot >= 0 ? slot : this.add(bytes, offset);
  }

  /** The slot of an item by its id, added when new. */
  slotOf(itemId: string): number {
    return this.slotAt(uuidBytes(itemId), 0);
  }

  /** The slot of an item by its id; -1 when the history has said nothing of it. */
  find(itemId: string): number {
    return this.table[this.cellAt(uuidBytes(itemId), 0)] - 1;
  }

  sum(slot: number): number {
    return this.sums[slot];
  }

  /** The last step's quantityAfter; null before the first step. */
  lastAfter(slot: number): number | null {
    const after = this.afters[slot];
    return Number.isNaN(after) ? null : after;
  }

  /** The last history entry's id; null before the first. */
  lastEntryId(slot: number): number | null {
    const id = this.entryIds[slot];
    return Number.isNaN(id) ? null : id;
  }

  /**
   * One step of an item in its event order: a history entry (`entryId`, `price` null) or an event still pending
   * for the history (`entryId` NaN, with its unit price).
   */
  step(slot: number, entryId: number, change: number, before: number, after: number, price: string | null) {
    const lastAfter = this.afters[slot];
    if (!Number.isNaN(lastAfter) && before !== lastAfter)
      this.report(slot, 'chain_break', `quantityBefore ${before} after ${lastAfter}`, [
        this.entryIds[slot],
        entryId,
      ]);
    const sum = (this.sums[slot] += change);
    if (sum < 0 || after < 0)
      this.report(slot, 'negative_quantity', `quantity ${Math.min(sum, after)}`, [entryId]);
    this.afters[slot] = after;
    if (!Number.isNaN(entryId)) this.entryIds[slot] = entryId;
    this.lastPrice[slot] = price;
  }

  /** Reports drift of a kind on an item (entry ids NaN or null are left out); the first report's detail stays. */
  report(slot: number, kind: DriftKind, detail: string, ids: (number | null)[]): void {
    const entryIds = ids.filter(id => id !== null && !Number.isNaN(id)).map(String);
    let kinds = this.found.get(slot);
    if (!kinds) this.found.set(slot, (kinds = new Map()));
    const found = kinds.get(kind);
    if (!found) kinds.set(kind, { itemId: this.ids[slot], kind, detail, entryIds });
    else if (found.entryIds.length < MAX_ENTRY_IDS) found.entryIds.push(...entryIds);
  }

  drift(): Drift[] {
    return [...this.found.values()].flatMap(kinds => [...kinds.values()]);
  }

  private add(bytes: Buffer, offset: number): number {
    const slot = this.ids.length;
    if ((slot + 1) * 2 > this.table.length) this.grow();
    for (let word = 0; word < 4; word++) this.keys[slot * 4 + word] = bytes.readInt32BE(offset + 4 * word);
    this.ids.push(formatUuid(bytes.toString('hex', offset, offset + 16)));
    this.lastPrice.push(null);
    this.sums[slot] = 0;
    this.afters[slot] = NaN;
    this.entryIds[slot] = NaN;
    this.place(slot);
    return slot;
  }

  /** cellOf the uuid whose 16 bytes are at `offset`. */
  private cellAt(bytes: Buffer, offset: number): number {
    return this.cellOf(
      bytes.readInt32BE(offset),
      bytes.readInt32BE(offset + 4),
      bytes.readInt32BE(offset + 8),
      bytes.readInt32BE(offset + 12),
    );
  }

  /** The cell holding the uuid's slot, or the empty cell where it would go (linear probing). */
  private cellOf(a: number, b: number, c: number, d: number): number {
    const { table, keys } = this;
    const mask = table.length - 1;
    for (let cell = hash(a, b, c, d) & mask; ; cell = (cell + 1) & mask) {
      const slot = table[cell] - 1;
      if (slot < 0) return cell;
      const k = slot * 4;
      if (keys[k] === a && keys[k + 1] === b && keys[k + 2] === c && keys[k + 3] === d) return cell;
    }
  }

  private place(slot: number): void {
    const k = slot * 4;
    this.table[this.cellOf(this.keys[k], this.keys[k + 1], this.keys[k + 2], this.keys[k + 3])] = slot + 1;
  }

  private grow(): void {
    const capacity = this.sums.length * 2;
    const widen = <T extends Int32Array | Float64Array>(from: T, to: T) => (to.set(from), to);
    this.keys = widen(this.keys, new Int32Array(capacity * 4));
    this.sums = widen(this.sums, new Float64Array(capacity));
    this.afters = widen(this.afters, new Float64Array(capacity));
    this.entryIds = widen(this.entryIds, new Float64Array(capacity));
    this.table = new Int32Array(capacity * 2);
    for (let slot = 0; slot < this.ids.length; slot++) this.place(slot);
  }
}
