import type { EntityManager } from '@mikro-orm/postgresql';
import { nativePool } from '../shared/native-transaction.js';

/** Bytes of a stored part of a file (`csv_import_part`); the last part of a file may be shorter. */
export const PART_BYTES = 1024 * 1024;

/** Part `seq` (0-based) of import `id`'s stored file (on the pool: the import's own connection is busy copying). */
export async function readPart(em: EntityManager, id: string, seq: number): Promise<Buffer> {
  // Straight on the driver: bytea parts need none of the ORM's result handling.
  const result = await (
    await nativePool(em)
  ).query<{ bytes: Buffer }>('select bytes from csv_import_part where import_id = $1 and seq = $2', [
    id,
    seq,
  ]);
  return result.rows[0]?.bytes ?? Buffer.alloc(0);
}

/**
 * Bytes of a part read at a time after the first: the driver receives bytea as hex text, which it gathers in a
 * buffer it grows by doubling, so a read of a whole part costs a string of twice its size and receive buffers of
 * up to four times.
 */
const SLICE_BYTES = 256 * 1024;

/** `length` bytes of part `seq` of import `id` from byte `from` (0-based); fewer at the part's end. */
async function readSlice(em: EntityManager, id: string, seq: number, from: number, length: number) {
  const result = await (
    await nativePool(em)
  ).query<{ bytes: Buffer }>(
    'select substring(bytes from $3 for $4) as bytes from csv_import_part where import_id = $1 and seq = $2',
    [id, seq, from + 1, length],
  );
  return result.rows[0]?.bytes ?? Buffer.alloc(0);
}

/**
 * The stored file part by part (`first` already read), each later part in slices of SLICE_BYTES, so an upload
 * at the size limit is never held whole and no read holds a whole part.
 */
export async function* storedFile(
  em: EntityManager,
  id: string,
  first: Buffer,
  size: number,
): AsyncGenerator<Buffer> {
  yield first;
  for (let seq = 1; seq * PART_BYTES < size; seq++) {
    const partBytes = Math.min(PART_BYTES, size - seq * PART_BYTES);
    for (let from = 0; from < partBytes; from += SLICE_BYTES)
      yield readSlice(em, id, seq, from, Math.min(SLICE_BYTES, partBytes - from));
  }
}
