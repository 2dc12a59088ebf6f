import { Readable, type Duplex } from 'node:stream';
import type { Connection, Submittable } from 'pg';
import type { CsvCopyKind } from './csv-copy.js';

/**
 * `COPY ... TO STDOUT` of copyCsvSql read straight off the connection's socket and finished into the export's
 * bytes (see csv-copy.ts). The backend sends each row as one CopyData message (the protocol guarantees it for
 * COPY TO), so a row is a message: its cells are found by one pass over its bytes. A row that arrives whole
 * in one socket chunk is written back into that chunk, where its 5-byte header was; the rows of a chunk are
 * pushed as one view of it. Only a row that does not fit there (it grew by more than its header) or that
 * spans two chunks gets a small buffer of its own (every buffer allocated here waits outside the JavaScript
 * heap for a full collection; at most a few per chunk, none per row).
 */

const COPY_DATA = 0x64; // d
const COPY_DONE = 0x63; // c
const COPY_OUT_RESPONSE = 0x48; // H
const ERROR_RESPONSE = 0x45; // E
/** Messages the backend may send at any time (protocol 55.2.6); skipped. */
const ASYNC_MESSAGES = new Set([0x4e /* N notice */, 0x53 /* S parameter */, 0x41 /* A notification */]);
const HEADER_BYTES = 5;
const [LF, CR, QUOTE, APOSTROPHE, SPACE, T, DOT, ZERO, Z, PLUS, DASH, COLON, B] = [
  '\n',
  '\r',
  '"',
  "'",
  ' ',
  'T',
  '.',
  '0',
  'Z',
  '+',
  '-',
  ':',
  'B',
].map(c => c.charCodeAt(0));
/** neutraliseFormula's first characters (` ' = + - @ tab CR`). */
const FORMULA_START = new Uint8Array(128);
for (const c of "'=+-@\t\r") FORMULA_START[c.charCodeAt(0)] = 1;
const INFINITY = Buffer.from('infinity');

export interface DecodedCopyOut {
  /** The chunk's rows as the export's bytes: views of the chunk, and the rows that got a buffer of their own. */
  rows: Buffer[];
  /** Set once the COPY's data is over: the bytes from its CopyDone's end or from an ErrorResponse on. */
  rest?: Buffer;
  /** Whether `rest` follows a CopyDone (the end of the data) rather than an error. */
  done: boolean;
}

/** Where the decimal point of the number `row[start, end)` is; -1 if it has none. */
function pointIn(row: Buffer, start: number, end: number): number {
  for (let at = end - 1; at >= start; at--) if (row[at] === DOT) return at;
  return -1;
}

/** The row the formatter is writing; grown when a row does not fit. */
class Output {
  bytes = Buffer.allocUnsafeSlow(4096);
  length = 0;

  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.length + n));
    this.bytes.copy(bigger, 0, 0, this.length);
    this.bytes = bigger;
  }
}

/**
 * The CopyOut protocol's bytes, in the chunks the socket delivers them, -> the export's rows (copyCsvSql rows,
 * each cell finished per its column's kind, CRLF row ends). Throws on anything that is not a row of such a
 * COPY or a message of a COPY: the caller must then drop the connection.
 */
export class CopyOutCsvRows {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerFill = 0;
  private code = 0;
  /** Payload bytes of the current message still to come; -1 between messages. */
  private remaining = -1;
  /** A row that spans chunks, while it arrives. */
  private pending = Buffer.allocUnsafeSlow(4096);
  private pendingFill = -1;
  private readonly out = new Output();

  constructor(
    private readonly delimiter: number,
    private readonly kinds: readonly CsvCopyKind[],
  ) {
    if (kinds.length === 0) throw new Error('CopyOutCsvRows: no columns');
  }

  decode(chunk: Buffer): DecodedCopyOut {
    const rows: Buffer[] = [];
    const end = chunk.length;
    let read = 0;
    let write = 0;
    /** Where the chunk's current view starts (after a row that got a buffer of its own). */
    let piece = 0;
    while (read < end) {
      if (this.remaining < 0) {
        if (this.headerFill === 0 && chunk[read] === ERROR_RESPONSE) {
          if (write > piece) rows.push(chunk.subarray(piece, write));
          return { rows, rest: chunk.subarray(read), done: false };
        }
        if (this.headerFill === 0 && end - read >= HEADER_BYTES) {
          this.code = chunk[read];
          this.remaining = chunk.readUInt32BE(read + 1) - 4;
          read += HEADER_BYTES;
        } else {
          this.header[this.headerFill++] = chunk[read++];
          if (this.headerFill < HEADER_BYTES) continue;
          this.headerFill = 0;
          this.code = this.header[0];
          this.remaining = this.header.readUInt32BE(1) - 4;
        }
        this.startMessage();
        if (this.code === COPY_DATA) {
          if (end - read >= this.remaining) {
            // The whole row is in this chunk: written back where it was, or on its own if it grew too much.
            const rowEnd = read + this.remaining;
            const length = this.formatRow(chunk, read, rowEnd);
            if (length <= rowEnd - write) {
              this.out.bytes.copy(chunk, write, 0, length);
              write += length;
            } else {
              if (write > piece) rows.push(chunk.subarray(piece, write));
              rows.push(Buffer.from(this.out.bytes.subarray(0, length)));
              piece = write = rowEnd;
            }
            read = rowEnd;
            this.remaining = -1;
            continue;
          }
          this.pendingFill = 0;
        }
      }
      const n = Math.min(this.remaining, end - read);
      if (this.pendingFill >= 0) {
        if (this.pendingFill + this.remaining > this.pending.length)
          this.pending = Buffer.allocUnsafeSlow(
            Math.max(this.pending.length * 2, this.pendingFill + this.remaining),
          );
        chunk.copy(this.pending, this.pendingFill, read, read + n);
        this.pendingFill += n;
      }
      read += n;
      this.remaining -= n;
      if (this.remaining > 0) continue;
      this.remaining = -1;
      if (this.pendingFill >= 0) {
        // A row that spanned chunks, on its own.
        const length = this.formatRow(this.pending, 0, this.pendingFill);
        this.pendingFill = -1;
        if (write > piece) rows.push(chunk.subarray(piece, write));
        rows.push(Buffer.from(this.out.bytes.subarray(0, length)));
        piece = write = read;
      } else if (this.code === COPY_DONE) {
        if (write > piece) rows.push(chunk.subarray(piece, write));
        return { rows, rest: chunk.subarray(read), done: true };
      }
    }
    if (write > piece) rows.push(chunk.subarray(piece, write));
    return { rows, done: false };
  }

  private startMessage(): void {
    const code = this.code;
    if (code !== COPY_DATA && code !== COPY_DONE && code !== COPY_OUT_RESPONSE && !ASYNC_MESSAGES.has(code))
      throw new Error(`unexpected message ${String.fromCharCode(code)} in COPY TO`);
    if (this.remaining < 0) throw new Error('malformed message length in COPY TO');
  }

  /**
   * Writes the export's row of the COPY row `row[start, end)` (its cells, then LF) to `out` and returns its
   * length. The bytes between the cells it changes are copied in one piece.
   */
  private formatRow(row: Buffer, start: number, end: number): number {
    const out = this.out;
    const delimiter = this.delimiter;
    const kinds = this.kinds;
    out.length = 0;
    // Every cell grows by at most 2 bytes (a timestamp; a formula prefix by 1); CRLF for the LF.
    out.reserve(end - start + 2 * kinds.length + 1);
    const bytes = out.bytes;
    if (end <= start || row[end - 1] !== LF) throw new Error('COPY row without LF');
    const last = end - 1;
    /** The first byte not written to `out` yet. */
    let copied = start;
    let at = start;
    for (let column = 0; column < kinds.length; column++) {
      if (column > 0) {
        if (row[at] !== delimiter) throw new Error('COPY row with fewer cells than columns');
        at++;
      }
      // The cell: quoted (to its closing quote, doubled quotes inside) or up to the next delimiter.
      let cellEnd = at;
      if (row[at] === QUOTE) {
        cellEnd = at + 1;
        for (;;) {
          while (cellEnd < last && row[cellEnd] !== QUOTE) cellEnd++;
          if (cellEnd >= last) throw new Error('COPY row with an unterminated quote');
          if (row[cellEnd + 1] === QUOTE) cellEnd += 2;
          else break;
        }
        cellEnd++;
      } else while (cellEnd < last && row[cellEnd] !== delimiter) cellEnd++;
      const kind = kinds[column];
      if (kind !== 'plain' && cellEnd > at && this.changes(kind, row, at, cellEnd)) {
        row.copy(bytes, out.length, copied, at);
        out.length += at - copied;
        if (kind === 'text') this.textCell(row, at, cellEnd);
        else if (kind === 'decimal') this.decimalCell(row, at, cellEnd);
        else this.timestampCell(row, at, cellEnd);
        copied = cellEnd;
      }
      at = cellEnd;
    }
    if (at !== last) throw new Error('COPY row with more cells than columns');
    row.copy(bytes, out.length, copied, last);
    out.length += last - copied;
    bytes[out.length++] = CR;
    bytes[out.length++] = LF;
    return out.length;
  }

  /** Whether the cell `row[start, end)` (not empty) is written otherwise than COPY wrote it. */
  private changes(kind: CsvCopyKind, row: Buffer, start: number, end: number): boolean {
    if (kind === 'timestamp') return true;
    if (kind === 'decimal') return row[end - 1] === ZERO && pointIn(row, start, end) >= 0;
    if (row[start] !== QUOTE) return FORMULA_START[row[start]] === 1;
    return end - start === 2 || FORMULA_START[row[start + 1]] === 1;
  }

  /** neutraliseFormula's `'` before a cell that starts like a formula; '' (which COPY quotes) left empty. */
  private textCell(row: Buffer, start: number, end: number): void {
    const out = this.out;
    const bytes = out.bytes;
    const quoted = row[start] === QUOTE;
    if (quoted && end - start === 2) return;
    const first = quoted ? start + 1 : start;
    if (quoted) bytes[out.length++] = QUOTE;
    bytes[out.length++] = APOSTROPHE;
    row.copy(bytes, out.length, first, end);
    out.length += end - first;
  }

  /** A numeric's text without its fraction's trailing zeros (and without a point left alone). */
  private decimalCell(row: Buffer, start: number, end: number): void {
    const point = pointIn(row, start, end);
    let cut = end;
    while (cut > point && row[cut - 1] === ZERO) cut--;
    if (cut === point + 1) cut = point;
    row.copy(this.out.bytes, this.out.length, start, cut);
    this.out.length += cut - start;
  }

  /**
   * A timestamptz's text output in ISO style and UTC (`2026-11-22 10:30:00.123456+00`, a fraction of 0-6
   * digits, ` BC` after the year's era) -> isoSql's text (`2026-11-22T10:30:00.123Z`: the fraction's first
   * three digits, as to_char's MS and JavaScript's Date keep them; to_char's YYYY: the year's digits without
   * its era); infinite timestamps (which to_char makes NULL) empty.
   */
  private timestampCell(row: Buffer, start: number, end: number): void {
    const out = this.out;
    const bytes = out.bytes;
    if (end - start === 8 && row.compare(INFINITY, 0, 8, start, end) === 0) return;
    if (end - start === 9 && row[start] === DASH && row.compare(INFINITY, 0, 8, start + 1, end) === 0) return;
    let zone = end;
    if (end - start > 3 && row[end - 3] === SPACE && row[end - 2] === B) zone = end - 3;
    // The year: its digits up to the first dash (4 or more).
    let dash = start;
    while (dash < zone && row[dash] !== DASH) dash++;
    const fraction = dash + 15;
    if (
      dash - start < 4 ||
      zone - fraction < 3 ||
      row[dash + 3] !== DASH ||
      row[dash + 6] !== SPACE ||
      row[dash + 9] !== COLON ||
      row[dash + 12] !== COLON ||
      row[zone - 3] !== PLUS ||
      row[zone - 2] !== ZERO ||
      row[zone - 1] !== ZERO ||
      (zone - fraction > 3 && (row[fraction] !== DOT || zone - fraction === 4 || zone - fraction > 10))
    )
      throw new Error('COPY timestamp not in ISO style and UTC');
    const digits = zone - fraction - 4;
    row.copy(bytes, out.length, start, fraction);
    bytes[out.length + (dash - start) + 6] = T;
    out.length += fraction - start;
    bytes[out.length] = DOT;
    bytes[out.length + 1] = digits >= 1 ? row[fraction + 1] : ZERO;
    bytes[out.length + 2] = digits >= 2 ? row[fraction + 2] : ZERO;
    bytes[out.length + 3] = digits >= 3 ? row[fraction + 3] : ZERO;
    bytes[out.length + 4] = Z;
    out.length += 5;
  }
}

type DataListener = (chunk: Buffer) => void;

/**
 * A pg submittable (`client.query(new CsvCopyOut(...))`) and the readable of the export's bytes: `head` (BOM
 * and header row) with the first rows (or at the end of a COPY of none), then the rows with CRLF ends. While
 * the COPY's data flows it owns the socket's `data` events (pg gets them back with the bytes after CopyDone, or
 * from an ErrorResponse on, which pg then reports through handleError). Backpressure: the socket is paused
 * whenever the reader is full, so the server waits to send. Destroying it leaves the connection mid-COPY: its
 * owner must end the connection (RowStreams.copyOut does).
 */
export class CsvCopyOut extends Readable implements Submittable {
  private readonly rows: CopyOutCsvRows;
  private socket?: Duplex;
  private pgListener?: DataListener;
  private headSent = false;

  /** `kinds`: those of the COPY's columns, in order. */
  constructor(
    private readonly text: string,
    private readonly head: Buffer,
    delimiter: string,
    kinds: readonly CsvCopyKind[],
  ) {
    super();
    const byte = Buffer.from(delimiter);
    if (byte.length !== 1) throw new Error('CsvCopyOut: the delimiter must be one byte');
    this.rows = new CopyOutCsvRows(byte[0], kinds);
  }

  /** Called by pg when the query's turn comes. */
  submit(connection: Connection): void {
    const socket = connection.stream;
    const listeners = socket.listeners('data') as DataListener[];
    if (listeners.length !== 1) throw new Error('CsvCopyOut: expected pg as the only reader of the socket');
    this.socket = socket;
    this.pgListener = listeners[0];
    socket.removeListener('data', this.pgListener);
    socket.on('data', this.onData);
    connection.query(this.text);
  }

  private readonly onData = (chunk: Buffer): void => {
    let decoded: DecodedCopyOut;
    try {
      decoded = this.rows.decode(chunk);
    } catch (error) {
      this.socket?.pause();
      this.destroy(error as Error);
      return;
    }
    let more = true;
    for (const rows of decoded.rows) more = this.send(rows);
    if (decoded.rest === undefined) {
      if (!more) this.socket?.pause();
      return;
    }
    if (decoded.done) {
      this.sendHead();
      this.push(null);
    }
    this.detach(decoded.rest);
  };

  private send(rows: Buffer): boolean {
    this.sendHead();
    return this.push(rows);
  }

  private sendHead(): void {
    if (this.headSent) return;
    this.headSent = true;
    this.push(this.head);
  }

  /** Hands the socket back to pg, with the bytes that follow the COPY's data. */
  private detach(rest: Buffer): void {
    const socket = this.socket!;
    const pgListener = this.pgListener!;
    this.socket = undefined;
    socket.removeListener('data', this.onData);
    socket.on('data', pgListener);
    if (rest.length > 0) pgListener(rest);
    socket.resume();
  }

  override _read(): void {
    this.socket?.resume();
  }

  /** pg: an ErrorResponse (handed back by detach), or the connection ended. */
  handleError(error: Error): void {
    this.destroy(error);
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {}
}
