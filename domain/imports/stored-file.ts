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

/** The stored file part by part (`first` already read), so an upload at the size limit is never held whole. */
export async function* storedFile(
  em: EntityManager,
  id: string,
  first: Buffer,
  size: number,
): AsyncGenerator<Buffer> {
  yield first;
  for (let seq = 1; seq * PART_BYTES < size; seq++) yield readPart(em, id, seq);
}
