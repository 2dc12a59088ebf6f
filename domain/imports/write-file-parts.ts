import { createHash } from 'node:crypto';
import type { SqlRun } from '../shared/native-transaction.js';
import { ValidationError } from '../shared/errors.js';
import { PART_BYTES } from './stored-file.js';
import { Utf8Check } from './utf8-check.js';

/** What was stored of a file: its length and its SHA-256 (hex). */
export interface WrittenFile {
  size: number;
  hash: string;
}

/**
 * Writes `content` as it arrives into `csv_import_part` rows of import `id`, PART_BYTES each (the last one
 * shorter): at most one part is held at a time, and a chunk that is one whole part is stored without a copy (it
 * may be a buffer the source reuses: it is done with once its insert is). The file must be UTF-8 (checked as it
 * streams) and not empty.
 */
export async function writeFileParts(
  sql: SqlRun,
  id: string,
  content: AsyncIterable<Buffer>,
): Promise<WrittenFile> {
  const hash = createHash('sha256');
  const utf8 = new Utf8Check();
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let size = 0;
  let seq = 0;
  const writePart = async (part: Buffer) => {
    utf8.push(part);
    hash.update(part);
    await sql('insert into csv_import_part (import_id, seq, bytes) values ($1, $2, $3)', [id, seq++, part]);
  };
  for await (const chunk of content) {
    size += chunk.length;
    // A whole part read on its own (the spool reads the file in parts): stored as it is, no copy.
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
  return { size, hash: hash.digest('hex') };
}
