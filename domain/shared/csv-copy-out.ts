import { Readable, type Duplex } from 'node:stream';
import type { Connection, Submittable } from 'pg';

/**
 * `COPY ... TO STDOUT` of copyCsvSql read straight off the connection's socket as the export's bytes. The
 * backend sends each row as one CopyData message (the protocol guarantees it for COPY TO), so the row ends
 * are the message ends: no scan for quotes or line breaks. The messages' 5-byte headers are dropped by moving
 * each row's bytes back in the socket's own chunk, and the byte before each row's LF (the delimiter of the
 * empty last column) becomes CR: nothing is allocated per row, and per chunk at most a small piece for a row
 * that starts in one chunk and ends in the next (every buffer allocated here would wait outside the
 * JavaScript heap for a full collection).
 */

const COPY_DATA = 0x64; // d
const COPY_DONE = 0x63; // c
const COPY_OUT_RESPONSE = 0x48; // H
const ERROR_RESPONSE = 0x45; // E
/** Messages the backend may send at any time (protocol 55.2.6); skipped. */
const ASYNC_MESSAGES = new Set([0x4e /* N notice */, 0x53 /* S parameter */, 0x41 /* A notification */]);
const LF = 0x0a;
const CR = 0x0d;
const HEADER_BYTES = 5;

/**
 * A timestamptz's text output in ISO style and UTC (`2026-11-22 10:30:00.123456+00`: 22 bytes, or 24-29 with
 * a fraction of 1-6 digits) -> ISO-8601 with milliseconds (`2026-11-22T10:30:00.123Z`: 24 bytes, the
 * fraction's first three digits, as to_char's MS and JavaScript's Date keep them).
 */
const TIMESTAMP_MIN = 22;
const TIMESTAMP_MAX = 29;
const ISO_BYTES = 24;
const [SPACE, T, DOT, ZERO, Z, PLUS, DASH, COLON] = [' ', 'T', '.', '0', 'Z', '+', '-', ':'].map(c =>
  c.charCodeAt(0),
);

export interface DecodedCopyOut {
  /** The chunk's rows as the export's bytes: views of the chunk itself (and a small piece, see above). */
  rows: Buffer[];
  /** Set once the COPY's data is over: the bytes from its CopyDone's end or from an ErrorResponse on. */
  rest?: Buffer;
  /** Whether `rest` follows a CopyDone (the end of the data) rather than an error. */
  done: boolean;
}

/**
 * The CopyOut protocol's bytes, in the chunks the socket delivers them, -> CSV rows with CRLF ends (copyCsvSql
 * rows: each ends with the delimiter and LF). With `leadingTimestamp` (copyCsvSql of a leadingTimestampColumn)
 * each row's first cell is a timestamp's text output, rewritten as ISO-8601 with milliseconds, or (years
 * outside 1-9999) already that text, ending in `Z`, and kept. Rewrites each chunk in place. Throws on anything
 * else (a row or a message that is not one of such a COPY): the caller must then drop the connection.
 */
export class CopyOutCsvRows {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerFill = 0;
  private code = 0;
  /** Payload bytes of the current message still to come; -1 between messages. */
  private remaining = -1;
  /** The first cell of a row that did not start whole in one chunk, with its delimiter, while it arrives. */
  private readonly cell = Buffer.alloc(TIMESTAMP_MAX + 1);
  private cellFill = -1;

  constructor(
    private readonly delimiter: number,
    private readonly leadingTimestamp = false,
  ) {}

  decode(chunk: Buffer): DecodedCopyOut {
    const rows: Buffer[] = [];
    const end = chunk.length;
    let read = 0;
    let write = 0;
    /** Where the chunk's current piece starts (after a piece of its own, see cellFill). */
    let piece = 0;
    while (read < end) {
      if (this.remaining < 0) {
        if (this.headerFill === 0 && chunk[read] === ERROR_RESPONSE) {
          if (write > piece) rows.push(chunk.subarray(piece, write));
          return { rows, rest: chunk.subarray(read), done: false };
        }
        let slack = false;
        if (this.headerFill === 0 && end - read >= HEADER_BYTES) {
          this.code = chunk[read];
          this.remaining = chunk.readUInt32BE(read + 1) - 4;
          read += HEADER_BYTES;
          slack = true;
        } else {
          this.header[this.headerFill++] = chunk[read++];
          if (this.headerFill < HEADER_BYTES) continue;
          this.headerFill = 0;
          this.code = this.header[0];
          this.remaining = this.header.readUInt32BE(1) - 4;
        }
        this.startMessage();
        if (this.code === COPY_DATA && this.leadingTimestamp) {
          // Whole in this chunk, after its header (5 bytes to spare for the 2 the shortest cell grows by).
          const cellEnd = slack ? this.cellEnd(chunk, read, Math.min(end, read + this.remaining)) : -1;
          if (cellEnd >= 0) {
            write = this.writeIso(chunk, read, cellEnd, chunk, write);
            this.remaining -= cellEnd - read;
            read = cellEnd;
          } else this.cellFill = 0;
        }
      }
      if (this.cellFill >= 0) {
        // The first cell, arriving across chunks: gathered, then written as a piece of its own.
        const available = Math.min(this.remaining, end - read);
        const stop = chunk.subarray(read, read + available).indexOf(this.delimiter);
        const take = stop < 0 ? available : stop;
        if (this.cellFill + take > TIMESTAMP_MAX) throw new Error('COPY row without a leading timestamp');
        chunk.copy(this.cell, this.cellFill, read, read + take);
        this.cellFill += take;
        read += take;
        this.remaining -= take;
        if (stop < 0) {
          if (this.remaining === 0) throw new Error('COPY row without a leading timestamp');
          continue;
        }
        if (write > piece) rows.push(chunk.subarray(piece, write));
        const iso = Buffer.allocUnsafe(Math.max(ISO_BYTES, this.cellFill));
        rows.push(iso.subarray(0, this.writeIso(this.cell, 0, this.cellFill, iso, 0)));
        this.cellFill = -1;
        piece = write = read;
      }
      const remaining = this.remaining;
      const n = Math.min(remaining, end - read);
      if (this.code === COPY_DATA && n > 0) {
        if (write !== read) chunk.copyWithin(write, read, read + n);
        // The row's last two bytes: the empty last column's delimiter, then LF.
        if (remaining >= 2 && remaining - n < 2) {
          const at = write + remaining - 2;
          if (chunk[at] !== this.delimiter) throw new Error('COPY row without the empty last column');
          chunk[at] = CR;
        }
        if (n === remaining && chunk[write + n - 1] !== LF) throw new Error('COPY row without LF');
        write += n;
      }
      read += n;
      this.remaining -= n;
      if (this.remaining === 0) {
        this.remaining = -1;
        if (this.code === COPY_DONE) {
          if (write > piece) rows.push(chunk.subarray(piece, write));
          return { rows, rest: chunk.subarray(read), done: true };
        }
      }
    }
    if (write > piece) rows.push(chunk.subarray(piece, write));
    return { rows, done: false };
  }

  private startMessage(): void {
    const code = this.code;
    if (code === COPY_DATA) {
      if (this.remaining < 2) throw new Error('COPY row without the empty last column');
    } else if (code !== COPY_DONE && code !== COPY_OUT_RESPONSE && !ASYNC_MESSAGES.has(code))
      throw new Error(`unexpected message ${String.fromCharCode(code)} in COPY TO`);
    if (this.remaining < 0) throw new Error('malformed message length in COPY TO');
  }

  /** Where the first cell that starts at `start` ends (its delimiter), if it does before `limit`; else -1. */
  private cellEnd(bytes: Buffer, start: number, limit: number): number {
    const last = Math.min(limit, start + TIMESTAMP_MAX + 1);
    for (let at = start + TIMESTAMP_MIN; at < last; at++) if (bytes[at] === this.delimiter) return at;
    if (last - start > TIMESTAMP_MAX) throw new Error('COPY row without a leading timestamp');
    return -1;
  }

  /**
   * Writes the cell `from[start, end)` at `to[at]` as ISO-8601 with milliseconds (see TIMESTAMP_MIN), or as it
   * is when it already is (ends in `Z`), and returns where it ends. `to` may be `from`, `at` before `start`.
   */
  private writeIso(from: Buffer, start: number, end: number, to: Buffer, at: number): number {
    const length = end - start;
    if (from[end - 1] === Z) {
      if (to === from) from.copyWithin(at, start, end);
      else from.copy(to, at, start, end);
      return at + length;
    }
    if (
      length < TIMESTAMP_MIN ||
      from[start + 4] !== DASH ||
      from[start + 7] !== DASH ||
      from[start + 10] !== SPACE ||
      from[start + 13] !== COLON ||
      from[start + 16] !== COLON ||
      from[end - 3] !== PLUS ||
      from[end - 2] !== ZERO ||
      from[end - 1] !== ZERO ||
      (length > TIMESTAMP_MIN && (length === TIMESTAMP_MIN + 1 || from[start + 19] !== DOT))
    )
      throw new Error('COPY row without a leading timestamp in ISO style and UTC');
    const digits = length - TIMESTAMP_MIN - 1;
    const m1 = digits >= 1 ? from[start + 20] : ZERO;
    const m2 = digits >= 2 ? from[start + 21] : ZERO;
    const m3 = digits >= 3 ? from[start + 22] : ZERO;
    if (to === from) from.copyWithin(at, start, start + 19);
    else from.copy(to, at, start, start + 19);
    to[at + 10] = T;
    to[at + 19] = DOT;
    to[at + 20] = m1;
    to[at + 21] = m2;
    to[at + 22] = m3;
    to[at + 23] = Z;
    return at + ISO_BYTES;
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

  /** `leadingTimestamp`: as for CopyOutCsvRows. */
  constructor(
    private readonly text: string,
    private readonly head: Buffer,
    delimiter: string,
    leadingTimestamp: boolean,
  ) {
    super();
    const byte = Buffer.from(delimiter);
    if (byte.length !== 1) throw new Error('CsvCopyOut: the delimiter must be one byte');
    this.rows = new CopyOutCsvRows(byte[0], leadingTimestamp);
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
