import { createHash } from 'node:crypto';
import type pg from 'pg';
import { copyIn } from '../shared/copy-in.js';
import { ValidationError } from '../shared/errors.js';
import { PART_BYTES } from './stored-file.js';
import { Utf8Check } from './utf8-check.js';

/** What was stored of a file: its length and its SHA-256 (hex). */
export interface WrittenFile {
  size: number;
  hash: string;
}

/** The signature, flags and header extension length that open a binary COPY. */
const COPY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
/** The field count -1 that ends a binary COPY. */
const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/** A `csv_import_part` row's fields before its bytes, in binary COPY: import id, seq and the bytes' length. */
function partHead(id: bigint, seq: number, length: number): Buffer {
  const head = Buffer.allocUnsafe(2 + 4 + 8 + 4 + 4 + 4);
  head.writeInt16BE(3, 0);
  head.writeInt32BE(8, 2);
  head.writeBigInt64BE(id, 6);
  head.writeInt32BE(4, 14);
  head.writeInt32BE(seq, 18);
  head.writeInt32BE(length, 22);
  return head;
}

/**
 * Writes `content` as it arrives into `csv_import_part` rows of import `id` (on `client`, in its transaction),
 * PART_BYTES each (the last one shorter), with one binary COPY: the bytes go to the database as they are, with no
 * statement buffer per part, and at most one part is held at a time. A chunk that is one whole part is sent
 * without a copy; it may be a buffer the source reuses, so the next chunk is only asked for once it is sent.
 * The file must be UTF-8 (checked as it streams) and not empty.
 */
export async function writeFileParts(
  client: pg.PoolClient,
  id: string,
  content: AsyncIterable<Buffer>,
): Promise<WrittenFile> {
  const importId = BigInt(id);
  const hash = createHash('sha256');
  const utf8 = new Utf8Check();
  const copy = copyIn(client, 'copy csv_import_part (import_id, seq, bytes) from stdin (format binary)');
  /** Resolves once `bytes` are handed to the connection's socket (its buffer may then be reused). */
  const send = (bytes: Buffer) =>
    copy.ended()
      ? copy.done
      : Promise.race([
          new Promise<void>((resolve, reject) =>
            copy.stream.write(bytes, error => (error ? reject(error) : resolve())),
          ),
          copy.done,
        ]);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let size = 0;
  let seq = 0;
  const writePart = async (part: Buffer) => {
    utf8.push(part);
    hash.update(part);
    await send(partHead(importId, seq++, part.length));
    await send(part);
  };
  try {
    await send(COPY_HEADER);
    for await (const chunk of content) {
      size += chunk.length;
      if (pendingBytes === 0 && chunk.length === PART_BYTES) {
        await writePart(chunk);
        continue;
      }
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < PART_BYTES) continue;
      const joined = Buffer.concat(pending, pendingBytes);
      for (let at = 0; at + PART_BYTES <= joined.length; at += PART_BYTES)
        await writePart(joined.subarray(at, at + PART_BYTES));
      const rest = joined.length % PART_BYTES;
      pending = rest > 0 ? [joined.subarray(joined.length - rest)] : [];
      pendingBytes = rest;
    }
    if (pendingBytes > 0) await writePart(Buffer.concat(pending, pendingBytes));
    if (size === 0) throw new ValidationError('csv.import.file.required');
    utf8.end();
    await send(COPY_TRAILER);
    copy.stream.end();
    await copy.done;
  } catch (error) {
    // Ends the COPY with an error, so the connection can roll back (unless the database ended it already).
    await copy.abandon(error as Error);
    throw copy.failure() ?? error;
  }
  return { size, hash: hash.digest('hex') };
}
