import type { Drift, DriftKind } from './drift.js';
import { UuidDictionary } from '../shared/uuid-dictionary.js';

/** Drift reports kept per item and kind (the entry ids of the first ones). */
const MAX_ENTRY_IDS = 20;

/**
 * What the history says of each item so far, in event order, for the integrity check. Items get dense slots from
 * a UuidDictionary, and their running state lives in typed arrays: a history
 * entry is looked up and applied without allocating (no uuid string, no row object), so a scan of millions of
 * entries does not churn the worker's small young generation. Memory follows the number of items.
 */
export class ItemStates {
  /** Each slot's item id. */
  private readonly uuids = new UuidDictionary();
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
    return this.uuids.size;
  }

  /** The item id (uuid text) of a slot. */
  itemId(slot: number): string {
    return this.uuids.text(slot);
  }

  /** The slot of the item whose uuid is the 16 bytes at `offset`, added when new. */
  slotAt(bytes: Buffer, offset: number): number {
    const size = this.uuids.size;
    const slot = this.uuids.idAt(bytes, offset);
    return slot < size ? slot : this.add(slot);
  }

  /** The slot of an item by its id, added when new. */
  slotOf(itemId: string): number {
    const size = this.uuids.size;
    const slot = this.uuids.idOfText(itemId);
    return slot < size ? slot : this.add(slot);
  }

  /** The slot of an item by its id; -1 when the history has said nothing of it. */
  find(itemId: string): number {
    return this.uuids.find(itemId);
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
    if (!found) kinds.set(kind, { itemId: this.itemId(slot), kind, detail, entryIds });
    else if (found.entryIds.length < MAX_ENTRY_IDS) found.entryIds.push(...entryIds);
  }

  drift(): Drift[] {
    return [...this.found.values()].flatMap(kinds => [...kinds.values()]);
  }

  /** Starts the state of a new slot. */
  private add(slot: number): number {
    if (slot >= this.sums.length) this.grow();
    this.lastPrice.push(null);
    this.sums[slot] = 0;
    this.afters[slot] = NaN;
    this.entryIds[slot] = NaN;
    return slot;
  }

  private grow(): void {
    const capacity = this.sums.length * 2;
    const widen = (from: Float64Array) => {
      const to = new Float64Array(capacity);
      to.set(from);
      return to;
    };
    this.sums = widen(this.sums);
    this.afters = widen(this.afters);
    this.entryIds = widen(this.entryIds);
  }
}
