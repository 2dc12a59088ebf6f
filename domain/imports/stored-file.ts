import type { EntityManager } from '@mikro-orm/postgresql';
import { nativePool } from '../shared/native-transaction.js';

/** Bytes of the stored file read at once (on the pool: the import's own connection is busy copying). */
const CHUNK_BYTES = 1024 * 1024;

/** The slice of import `id`'s stored file that starts at byte `at` (0-based). */
export async function readChunk(em: EntityManager, id: string, at: number): Promise<Buffer> {
  // Straight on the driver: bytea slices need none of the ORM's result handling.
  const result = await (
    await nativePool(em)
  ).query<{ part: Buffer }>(
    'select substring(content from $1 for $2) as part from csv_import where id = $3',
    [at + 1, CHUNK_BYTES, id],
  );
  return result.rows[0].part;
}

/** The stored file in chunks, so a 20 MB file is never held whole (nor as the hex text of its bytea). */
export async function* storedFile(
  em: EntityManager,
  id: string,
  first: Buffer,
  size: number,
): AsyncGenerator<Buffer> {
  yield first;
  for (let at = CHUNK_BYTES; at < size; at += CHUNK_BYTES) yield readChunk(em, id, at);
}
