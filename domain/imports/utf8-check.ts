import { isUtf8 } from 'node:buffer';
import { ValidationError } from '../shared/errors.js';

/** Bytes of the UTF-8 sequence that `lead` starts (1 for ASCII and for bytes that start none). */
const sequenceLength = (lead: number): number => (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1);

/** Where the sequence that `bytes` ends in the middle of starts (`bytes.length` when it ends whole). */
function incompleteTail(bytes: Buffer, from: number): number {
  for (let at = bytes.length - 1; at >= Math.max(from, bytes.length - 3); at--) {
    const byte = bytes[at];
    if (byte < 0x80) break;
    if (byte >= 0xc0) return at + sequenceLength(byte) > bytes.length ? at : bytes.length;
  }
  return bytes.length;
}

/**
 * Checks that a file read in chunks is UTF-8, chunk by chunk and without decoding it into strings: a sequence
 * cut by a chunk's end is checked with the start of the next. Throws `csv.import.encoding` (400) otherwise.
 */
export class Utf8Check {
  private carry: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    let start = 0;
    if (this.carry.length > 0) {
      const need = sequenceLength(this.carry[0]) - this.carry.length;
      const head = Buffer.concat([this.carry, chunk.subarray(0, need)]);
      if (chunk.length < need) {
        this.carry = head;
        return;
      }
      this.verify(head);
      start = need;
    }
    const cut = incompleteTail(chunk, start);
    this.verify(chunk.subarray(start, cut));
    this.carry = Buffer.from(chunk.subarray(cut));
  }

  /** The file's end: a sequence still open is not UTF-8. */
  end(): void {
    if (this.carry.length > 0) this.verify(this.carry);
  }

  private verify(bytes: Buffer): void {
    if (!isUtf8(bytes)) throw new ValidationError('csv.import.encoding');
  }
}
