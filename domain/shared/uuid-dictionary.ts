/** A uuid's 16 bytes as four 32-bit words, mixed into a table index. */
const hash = (a: number, b: number, c: number, d: number) =>
  Math.imul(Math.imul(Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ b, 0xc2b2ae35) ^ c, 0x27d4eb2f) ^ d;

const uuidBytes = (uuid: string) => Buffer.from(uuid.replaceAll('-', ''), 'hex');

/**
 * Dense ids (0, 1, 2, ...) for uuids read as 16 bytes from a binary COPY (items, suppliers): an open-addressing
 * table keyed by the uuid's four 32-bit words, so a uuid seen before is found without a string or a Buffer being
 * made. Each id's bytes are kept in one buffer (`bytes`, 16 per id) to be written back; its text is made only
 * when asked for. Memory follows the number of distinct uuids.
 */
export class UuidDictionary {
  /** Id + 1 per table cell, 0 when empty; twice as many cells as ids at least. */
  private table = new Int32Array(64);
  /** Each id's uuid as four 32-bit words. */
  private keys = new Int32Array(4 * 32);
  private stored = Buffer.alloc(16 * 32);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Every id's 16 bytes, id after id (the uuid of id `i` at `16 * i`); a new buffer once the ids outgrow it. */
  get bytes(): Buffer {
    return this.stored;
  }

  /** The id of the uuid whose 16 bytes are at `offset` of `bytes`, added when new. */
  idAt(bytes: Buffer, offset: number): number {
    const a = bytes.readInt32BE(offset);
    const b = bytes.readInt32BE(offset + 4);
    const c = bytes.readInt32BE(offset + 8);
    const d = bytes.readInt32BE(offset + 12);
    const cell = this.cellOf(a, b, c, d);
    const id = this.table[cell] - 1;
    return id >= 0 ? id : this.add(a, b, c, d, cell);
  }

  /** The id of a uuid's text, added when new (the slow path, for uuids that do not come from COPY's bytes). */
  idOfText(uuid: string): number {
    return this.idAt(uuidBytes(uuid), 0);
  }

  /** The id of a uuid's text; -1 when it has none. */
  find(uuid: string): number {
    const bytes = uuidBytes(uuid);
    return (
      this.table[
        this.cellOf(bytes.readInt32BE(0), bytes.readInt32BE(4), bytes.readInt32BE(8), bytes.readInt32BE(12))
      ] - 1
    );
  }

  /** The uuid of an id, as text. */
  text(id: number): string {
    const hex = this.stored.toString('hex', 16 * id, 16 * id + 16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** The cell holding the uuid's id, or the empty cell where it would go (linear probing). */
  private cellOf(a: number, b: number, c: number, d: number): number {
    const { table, keys } = this;
    const mask = table.length - 1;
    for (let cell = hash(a, b, c, d) & mask; ; cell = (cell + 1) & mask) {
      const id = table[cell] - 1;
      if (id < 0) return cell;
      const k = id * 4;
      if (keys[k] === a && keys[k + 1] === b && keys[k + 2] === c && keys[k + 3] === d) return cell;
    }
  }

  private add(a: number, b: number, c: number, d: number, cell: number): number {
    const id = this.count++;
    if (id * 4 >= this.keys.length) {
      const keys = new Int32Array(this.keys.length * 2);
      keys.set(this.keys);
      this.keys = keys;
      const stored = Buffer.alloc(this.stored.length * 2);
      this.stored.copy(stored);
      this.stored = stored;
    }
    const k = id * 4;
    this.keys[k] = a;
    this.keys[k + 1] = b;
    this.keys[k + 2] = c;
    this.keys[k + 3] = d;
    this.stored.writeInt32BE(a, 16 * id);
    this.stored.writeInt32BE(b, 16 * id + 4);
    this.stored.writeInt32BE(c, 16 * id + 8);
    this.stored.writeInt32BE(d, 16 * id + 12);
    this.table[cell] = id + 1;
    if (this.count * 2 > this.table.length) this.grow();
    return id;
  }

  private grow(): void {
    this.table = new Int32Array(this.table.length * 2);
    for (let id = 0, k = 0; id < this.count; id++, k += 4)
      this.table[this.cellOf(this.keys[k], this.keys[k + 1], this.keys[k + 2], this.keys[k + 3])] = id + 1;
  }
}
