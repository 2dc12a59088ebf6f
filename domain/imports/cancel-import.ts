import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { isImportJobId, type ImportKindName } from './import-kinds.js';

/**
 * DELETE of an import: a queued or running one (still validating) ends as cancelled and nothing of it is
 * applied (the run checks its state before it applies, and the apply commits only from `applying`). Once
 * applying, or finished: 409. Unknown, or of the other kind: 404.
 */
export async function cancelImport(em: EntityManager, kind: ImportKindName, jobId: string): Promise<void> {
  if (!isImportJobId(jobId)) throw new NotFoundError('csv.import.not.found');
  const cancelled = await em.execute<{ id: string }[]>(
    `update csv_import set state = 'cancelled', finished_at = now(), updated_at = now()
      where public_id = ? and kind = ? and state in ('queued', 'running') returning id`,
    [jobId, kind],
  );
  if (cancelled.length > 0) return;
  const rows = await em.execute<{ state: string }[]>(
    'select state from csv_import where public_id = ? and kind = ?',
    [jobId, kind],
  );
  if (!rows[0]) throw new NotFoundError('csv.import.not.found');
  throw new ConflictError('csv.import.not.cancellable', { params: { state: rows[0].state } });
}
