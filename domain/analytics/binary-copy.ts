import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** COPY's binary header: signature, flags (0) and header-extension length (0). */
export const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER = Buffer.concat([COPY_SIGNATURE, Buffer.alloc(8)]);

/** A chunk goes to the stream once it holds this much; a row never holds more than the slack. */
const CHUNK = 1 << 20;
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
  private bytes = Buffer.allocUnsafe(CHUNK + SLACK);
  private at = 0;
  private waiting = false;
  private failure: Error | null = null;
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
    this.bytes.writeInt16BE(fields, this.at);
    this.at += 2;
    this.rows++;
  }

  null(): void {
    this.bytes.writeInt32BE(-1, this.at);
    this.at += 4;
  }

  int2(value: number): void {
    this.bytes.writeInt32BE(2, this.at);
    this.bytes.writeInt16BE(value, this.at + 4);
    this.at += 6;
  }

  int4(value: number): void {
    this.bytes.writeInt32BE(4, this.at);
    this.bytes.writeInt32BE(value, this.at + 4);
    this.at += 8;
  }

  /** A safe integer as int8 (event ids, sums of quantities). */
  int8(value: number): void {
    const high = Math.floor(value / TWO32);
    this.bytes.writeInt32BE(8, this.at);
    this.bytes.writeInt32BE(high, this.at + 4);
    this.bytes.writeUInt32BE(value - high * TWO32, this.at + 8);
    this.at += 12;
  }

  /** A date as days since 2000-01-01 (PostgreSQL's own form). */
  date(days: number): void {
    this.int4(days);
  }

  /** 16 bytes of a uuid at `offset` of `source`. */
  uuid(source: Buffer, offset: number): void {
    this.bytes.writeInt32BE(16, this.at);
    source.copy(this.bytes, this.at + 4, offset, offset + 16);
    this.at += 20;
  }

  /** Text already in the connection's encoding. */
  text(source: Buffer): void {
    this.bytes.writeInt32BE(source.length, this.at);
    source.copy(this.bytes, this.at + 4);
    this.at += 4 + source.length;
  }

  /** An amount in units of 1e-4 as `numeric` (scale 4; the column's typmod rounds nothing off exact units). */
  numeric(units: number | bigint): void {
    if (typeof units === 'bigint') return this.bigNumeric(units);
    const negative = units < 0;
    let rest = negative ? -units : units;
    // Base-10000 digits, least significant (the 4 decimals) first; at most 4 for a safe integer.
    const d0 = rest % NBASE;
    rest = (rest - d0) / NBASE;
    const d1 = rest % NBASE;
    rest = (rest - d1) / NBASE;
    const d2 = rest % NBASE;
    const d3 = (rest - d2) / NBASE;
    const top = d3 !== 0 ? 3 : d2 !== 0 ? 2 : d1 !== 0 ? 1 : d0 !== 0 ? 0 : -1;
    const low = d0 !== 0 ? 0 : d1 !== 0 ? 1 : d2 !== 0 ? 2 : 3;
    const count = top < 0 ? 0 : top - low + 1;
    const at = this.at;
    this.bytes.writeInt32BE(8 + 2 * count, at);
    this.bytes.writeInt16BE(count, at + 4);
    this.bytes.writeInt16BE(count === 0 ? 0 : top - 1, at + 6);
    this.bytes.writeUInt16BE(negative && count > 0 ? 0x4000 : 0, at + 8);
    this.bytes.writeInt16BE(4, at + 10);
    let o = at + 12;
    for (let i = top; i >= low; i--, o += 2)
      this.bytes.writeInt16BE(i === 3 ? d3 : i === 2 ? d2 : i === 1 ? d1 : d0, o);
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

  private send(): void {
    if (this.at === 0) return;
    if (!this.stream.write(this.bytes.subarray(0, this.at))) this.waiting = true;
    this.bytes = Buffer.allocUnsafe(CHUNK + SLACK);
    this.at = 0;
  }
}

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
