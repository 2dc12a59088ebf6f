import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../shared/errors.js';
import { isoSql } from '../shared/sql.js';
import { isImportJobId, type ImportKindName } from './import-kinds.js';
import type { ImportReport } from './run-import.js';

export interface ImportStatus {
  jobId: string;
  state: 'queued' | 'running' | 'applying' | 'completed' | 'failed' | 'cancelled';
  dryRun: boolean;
  progress: { rowsRead: number; rowsTotal: number | null };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** The report (completed), `{ error }` (failed) or null (not finished, or cancelled). */
  report: ImportReport | { error: string } | null;
  /** The language the report's messages are given in (that of the import request). */
  language: string;
}

/** State, progress and report of an import of `kind` (404 for an unknown job or one of the other kind). */
export async function getImportStatus(
  em: EntityManager,
  kind: ImportKindName,
  jobId: string,
): Promise<ImportStatus> {
  if (!isImportJobId(jobId)) throw new NotFoundError('csv.import.not.found');
  const rows = await em.execute<
    (Omit<ImportStatus, 'jobId' | 'progress'> & { rowsRead: number; rowsTotal: number | null })[]
  >(
    `select state, dry_run as "dryRun", rows_read as "rowsRead", rows_total as "rowsTotal", report, language,
                ${isoSql('created_at')} as "createdAt", ${isoSql('started_at')} as "startedAt",
                ${isoSql('finished_at')} as "finishedAt"
           from csv_import where public_id = ? and kind = ?`,
    [jobId, kind],
  );
  if (!rows[0]) throw new NotFoundError('csv.import.not.found');
  const { rowsRead, rowsTotal, ...row } = rows[0];
  return { ...row, jobId, progress: { rowsRead, rowsTotal } };
}
