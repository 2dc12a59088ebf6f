import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { COPY_SIGNATURE } from '../../shared/binary-copy-reader.js';

/** COPY's binary header: signature, flags (0) and header-extension length (0). */
const HEADER = Buffer.concat([COPY_SIGNATURE, Buffer.alloc(8)]);

/** A chunk goes to the stream once it holds this much; a row never holds more than the slack. */
const CHUNK = 256 * 1024;
const SLACK = 64 * 1024;

const SAFE = Number.MAX_SAFE_INTEGER;
const TWO32 = 0x1_0000_0000;

/** `numeric` is sent and read in base-10000 digits; amounts here are integers in units of 1e-4. */
const NBASE = 10000;

/**
 * Rows of one `COPY … FROM STDIN (FORMAT binary)`, encoded straight into chunks of bytes (no row object, no
 * text): `row(n)` and then n field writers per row. A full chunk is handed to the stream at the next row;
 * `pressure` says the stream wants the writer to wait for `drained()`.
 */
export class BinaryCopyWriter {
  private bytes: Buffer = Buffer.allocUnsafe(CHUNK + SLACK);
  private view = viewOf(this.bytes);
  private at = 0;
  private waiting = false;
  private failure: Error | null = null;
  private previous: Buffer | null = null;
  private readonly free: Buffer[] = [];
  rows = 0;

  constructor(private readonly stream: Writable) {
    stream.on('error', error => {
      this.failure = error;
    });
    HEADER.copy(this.bytes, 0);
    this.at = HEADER.length;
  }

  get pressure(): boolean {
    return this.waiting;
  }

  async drained(): Promise<void> {
    if (this.failure) throw this.failure;
    // The stream may have drained since a write said it was full (its 'drain' event gone by then).
    if (!this.waiting || !this.stream.writableNeedDrain) {
      this.waiting = false;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        this.stream.off('error', fail);
        resolve();
      };
      const fail = (error: Error) => {
        this.stream.off('drain', done);
        reject(error);
      };
      this.stream.once('drain', done);
      this.stream.once('error', fail);
    });
    this.waiting = false;
  }

  row(fields: number): void {
    if (this.at >= CHUNK) {
      if (this.failure) throw this.failure;
      this.send();
    }
    this.view.setInt16(this.at, fields);
    this.at += 2;
    this.rows++;
  }

  null(): void {
    this.view.setInt32(this.at, -1);
    this.at += 4;
  }

  int2(value: number): void {
    this.view.setInt32(this.at, 2);
    this.view.setInt16(this.at + 4, value);
    this.at += 6;
  }

  int4(value: number): void {
    this.view.setInt32(this.at, 4);
    this.view.setInt32(this.at + 4, value);
    this.at += 8;
  }

  /** A safe integer as int8 (event ids, sums of quantities). */
  int8(value: number): void {
    const high = Math.floor(value / TWO32);
    this.view.setInt32(this.at, 8);
    this.view.setInt32(this.at + 4, high);
    this.view.setUint32(this.at + 8, value - high * TWO32);
    this.at += 12;
  }

  /** A date as days since 2000-01-01 (PostgreSQL's own form). */
  date(days: number): void {
    this.int4(days);
  }

  /** 16 bytes of a uuid at `offset` of `source`. */
  uuid(source: Buffer, offset: number): void {
    const bytes = this.bytes;
    const at = this.at + 4;
    this.view.setInt32(this.at, 16);
    for (let i = 0; i < 16; i++) bytes[at + i] = source[offset + i];
    this.at = at + 16;
  }

  /** Text already in the connection's encoding. */
  text(source: Buffer): void {
    const length = source.length;
    const at = this.at + 4;
    this.view.setInt32(this.at, length);
    if (length > 64) source.copy(this.bytes, at);
    else for (let i = 0, bytes = this.bytes; i < length; i++) bytes[at + i] = source[i];
    this.at = at + length;
  }

  /** An amount in units of 1e-4 as `numeric` (scale 4; the column's typmod rounds nothing off exact units). */
  numeric(units: number | bigint): void {
    if (typeof units === 'bigint') return this.bigNumeric(units);
    const view = this.view;
    const at = this.at;
    if (units === 0) {
      // No digits, weight 0, sign +, scale 4.
      view.setInt32(at, 8);
      view.setInt32(at + 4, 0);
      view.setInt32(at + 8, 4);
      this.at = at + 12;
      return;
    }
    const negative = units < 0;
    let rest = negative ? -units : units;
    // Base-10000 digits, least significant (the 4 decimals) first; at most 4 for a safe integer.
    const d0 = rest % NBASE;
    rest = (rest - d0) / NBASE;
    const d1 = rest % NBASE;
    rest = (rest - d1) / NBASE;
    const d2 = rest % NBASE;
    const d3 = (rest - d2) / NBASE;
    const top = d3 !== 0 ? 3 : d2 !== 0 ? 2 : d1 !== 0 ? 1 : 0;
    const low = d0 !== 0 ? 0 : d1 !== 0 ? 1 : d2 !== 0 ? 2 : 3;
    const count = top - low + 1;
    view.setInt32(at, 8 + 2 * count);
    view.setInt16(at + 4, count);
    view.setInt16(at + 6, top - 1);
    view.setUint16(at + 8, negative ? 0x4000 : 0);
    view.setInt16(at + 10, 4);
    let o = at + 12;
    for (let i = top; i >= low; i--, o += 2)
      view.setInt16(o, i === 3 ? d3 : i === 2 ? d2 : i === 1 ? d1 : d0);
    this.at = o;
  }

  private bigNumeric(units: bigint): void {
    if (units >= -BigInt(SAFE) && units <= BigInt(SAFE)) return this.numeric(Number(units));
    const negative = units < 0n;
    let rest = negative ? -units : units;
    const digits: number[] = [];
    while (rest > 0n) {
      digits.push(Number(rest % 10000n));
      rest /= 10000n;
    }
    this.numericDigits(negative, digits);
  }

  /** `digits` least significant first, the first one being the 4 decimals. */
  private numericDigits(negative: boolean, digits: number[]): void {
    let low = 0;
    while (low < digits.length && digits[low] === 0) low++;
    const count = digits.length - low;
    const at = this.at;
    this.bytes.writeInt32BE(8 + 2 * count, at);
    this.bytes.writeInt16BE(count, at + 4);
    this.bytes.writeInt16BE(count === 0 ? 0 : digits.length - 2, at + 6);
    this.bytes.writeUInt16BE(negative && count > 0 ? 0x4000 : 0, at + 8);
    this.bytes.writeInt16BE(4, at + 10);
    for (let i = digits.length - 1, o = at + 12; i >= low; i--, o += 2) this.bytes.writeInt16BE(digits[i], o);
    this.at = at + 12 + 2 * count;
  }

  /** Sends the trailer and what is left, ends the COPY and waits until the server has taken it. */
  async end(): Promise<void> {
    this.bytes.writeInt16BE(-1, this.at);
    this.at += 2;
    this.send();
    await this.drained();
    this.stream.end();
    await finished(this.stream);
  }

  /**
   * Hands the chunk to the stream and goes on in a free one. A chunk is reused once the NEXT one's write has
   * called back: the connection writes in order and called back when its socket held less than a chunk, so
   * by then none of the earlier chunk's bytes are waiting to be sent. Without the reuse, dead chunks outside the
   * heap piled up until a full collection.
   */
  private send(): void {
    if (this.at === 0) return;
    const chunk = this.bytes;
    const before = this.previous;
    this.previous = chunk;
    const room = this.free;
    if (!this.stream.write(chunk.subarray(0, this.at), () => before && room.length < 4 && room.push(before)))
      this.waiting = true;
    this.bytes = room.pop() ?? Buffer.allocUnsafe(CHUNK + SLACK);
    this.view = viewOf(this.bytes);
    this.at = 0;
  }
}

const viewOf = (bytes: Buffer) => new DataView(bytes.buffer, bytes.byteOffset, bytes.length);

/**
 * A binary `numeric` field (`length` bytes at `offset`) as units of 1e-4; NaN for a value that is not a number
 * or has more than 4 decimals (never for the history's columns). Exact while the value is below 2^53 units,
 * which the history's numeric(12,2) and numeric(14,4) columns are.
 */
export function numericUnits(bytes: Buffer, offset: number): number {
  const count = bytes.readInt16BE(offset);
  const weight = bytes.readInt16BE(offset + 2);
  const sign = bytes.readUInt16BE(offset + 4);
  if (sign !== 0 && sign !== 0x4000) return NaN;
  let units = 0;
  for (let i = 0; i < count; i++) {
    const power = weight - i + 1;
    const digit = bytes.readInt16BE(offset + 8 + 2 * i);
    if (power < 0) {
      if (digit !== 0) return NaN;
      continue;
    }
    units += digit * NBASE ** power;
  }
  return sign === 0x4000 ? -units : units;
}
