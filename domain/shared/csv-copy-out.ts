import { Readable, type Duplex } from 'node:stream';
import type { Connection, Submittable } from 'pg';

/**
 * `COPY ... TO STDOUT` of copyCsvSql read straight off the connection's socket as the export's bytes. The
 * backend sends each row as one CopyData message (the protocol guarantees it for COPY TO), so the row ends
 * are the message ends: no scan for quotes or line breaks. The messages' 5-byte headers are dropped by moving
 * each row's bytes back in the socket's own chunk, and the byte before each row's LF (the delimiter of the
 * empty last column) becomes CR: nothing is allocated per chunk or per row (every buffer allocated here would
 * wait outside the JavaScript heap for a full collection).
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

export interface DecodedCopyOut {
  /** The chunk's rows as the export's bytes (a view of the chunk itself, possibly empty). */
  rows: Buffer;
  /** Set once the COPY's data is over: the bytes from its CopyDone's end or from an ErrorResponse on. */
  rest?: Buffer;
  /** Whether `rest` follows a CopyDone (the end of the data) rather than an error. */
  done: boolean;
}

/**
 * The CopyOut protocol's bytes, in the chunks the socket delivers them, -> CSV rows with CRLF ends (copyCsvSql
 * rows: each ends with the delimiter and LF). Rewrites each chunk in place. Throws on anything that is not a
 * copyCsvSql row or a message of a COPY: the caller must then drop the connection.
 */
export class CopyOutCsvRows {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerFill = 0;
  private code = 0;
  /** Payload bytes of the current message still to come; -1 between messages. */
  private remaining = -1;

  constructor(private readonly delimiter: number) {}

  decode(chunk: Buffer): DecodedCopyOut {
    const end = chunk.length;
    let read = 0;
    let write = 0;
    while (read < end) {
      if (this.remaining < 0) {
        if (this.headerFill === 0 && chunk[read] === ERROR_RESPONSE)
          return { rows: chunk.subarray(0, write), rest: chunk.subarray(read), done: false };
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
        if (this.code === COPY_DONE)
          return { rows: chunk.subarray(0, write), rest: chunk.subarray(read), done: true };
      }
    }
    return { rows: chunk.subarray(0, write), done: false };
  }

  private startMessage(): void {
    const code = this.code;
    if (code === COPY_DATA) {
      if (this.remaining < 2) throw new Error('COPY row without the empty last column');
    } else if (code !== COPY_DONE && code !== COPY_OUT_RESPONSE && !ASYNC_MESSAGES.has(code))
      throw new Error(`unexpected message ${String.fromCharCode(code)} in COPY TO`);
    if (this.remaining < 0) throw new Error('malformed message length in COPY TO');
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

  constructor(
    private readonly text: string,
    private readonly head: Buffer,
    delimiter: string,
  ) {
    super();
    const byte = Buffer.from(delimiter);
    if (byte.length !== 1) throw new Error('CsvCopyOut: the delimiter must be one byte');
    this.rows = new CopyOutCsvRows(byte[0]);
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
    if (decoded.rows.length > 0) more = this.send(decoded.rows);
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
