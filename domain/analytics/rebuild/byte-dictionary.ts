/**
 * Dense ids for byte strings read from a binary COPY (names, reasons, users): an open-addressing table
 * keyed by a hash of the bytes, checked byte by byte, so a value seen before is found without a string or a
 * Buffer being made. Each value's bytes are kept (to write it back) and its text made once, when first seen.
 */
export class ByteDictionary {
  private table = new Int32Array(64);
  private hashes = new Int32Array(32);
  readonly values: Buffer[] = [];
  readonly texts: string[] = [];

  get size(): number {
    return this.values.length;
  }

  /** The id of the bytes `start`..`end` of `bytes`, added when new. */
  idOf(bytes: Buffer, start: number, end: number): number {
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193);
    const mask = this.table.length - 1;
    const length = end - start;
    for (let cell = hash & mask; ; cell = (cell + 1) & mask) {
      const id = this.table[cell] - 1;
      if (id < 0) return this.add(bytes, start, end, hash, cell);
      if (this.hashes[id] !== hash) continue;
      const value = this.values[id];
      if (value.length !== length) continue;
      let i = 0;
      while (i < length && value[i] === bytes[start + i]) i++;
      if (i === length) return id;
    }
  }

  /** The id of a text (the slow path, for values that do not come from COPY's bytes). */
  idOfText(text: string): number {
    const bytes = Buffer.from(text);
    return this.idOf(bytes, 0, bytes.length);
  }

  private add(bytes: Buffer, start: number, end: number, hash: number, cell: number): number {
    const id = this.values.length;
    this.values.push(Buffer.from(bytes.subarray(start, end)));
    this.texts.push(bytes.toString('utf8', start, end));
    if (id >= this.hashes.length) {
      const hashes = new Int32Array(this.hashes.length * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
    }
    this.hashes[id] = hash;
    this.table[cell] = id + 1;
    if ((id + 1) * 2 > this.table.length) this.grow();
    return id;
  }

  private grow(): void {
    this.table = new Int32Array(this.table.length * 2);
    const mask = this.table.length - 1;
    for (let id = 0; id < this.values.length; id++) {
      let cell = this.hashes[id] & mask;
      while (this.table[cell] !== 0) cell = (cell + 1) & mask;
      this.table[cell] = id + 1;
    }
  }
}
