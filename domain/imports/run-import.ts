import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueueProducer } from '../queues/queue-producer.js';
import { publishEvents } from '../outbox/publish-events.js';
import { estimateRows, openCsv } from './csv-records.js';
import { IMPORT_KINDS, type ImportKindName } from './import-kinds.js';
import { RowRejected, type ImportRun, type RowRejection } from './import-kind.js';

/** The outcome of an import, the same for its dry run and its real run. */
export interface ImportReport {
  created: number;
  updated: number;
  unchanged: number;
  /** Every rejected row counts; the first MAX_LISTED_REJECTIONS are listed. */
  rejectedCount: number;
  rejected: RowRejection[];
  /** True when the changes were committed (a real run without rejected rows). */
  applied: boolean;
}

const IMPORT_LOCK_NS = 740020;
const MAX_LISTED_REJECTIONS = 1000;
const PROGRESS_EVERY_ROWS = 500;

/** Ends the transaction without committing: a dry run, or a file with rejected rows. */
class Rollback extends Error {}
/** Another run finished this import while this one waited for its lock. */
class AlreadyDone extends Error {}

interface StoredImport {
  kind: ImportKindName;
  content: Buffer;
  dry_run: boolean;
  create_suppliers: boolean;
  requested_by: string;
  correlation_id: string | null;
  state: string;
  report: ImportReport | null;
}

async function finish(em: EntityManager, id: string, report: ImportReport): Promise<void> {
  await em.execute(
    // clock_timestamp(): now() would be the start of the import's transaction.
    `update csv_import set state = 'completed', report = ?::jsonb, finished_at = clock_timestamp(),
            updated_at = clock_timestamp(),
            rows_read = coalesce(rows_total, rows_read) where id = ?`,
    [JSON.stringify(report), id],
  );
}

/**
 * Runs one import (the worker's use case): every row is validated and applied in ONE transaction through the
 * same use cases as the API (guarded stock updates and outbox events included). The report lists every
 * rejected row; with any rejection, or in a dry run, the transaction is rolled back, so the dry run and the
 * real import report the same. The completed state commits with the changes, so a rerun after a crash
 * (the job is retried) either finds it done or starts again from a clean slate: never applied twice.
 */
export async function runImport(
  em: EntityManager,
  queues: QueueProducer,
  id: string,
  options: { isKey: (key: string) => boolean; onProgress?: (read: number, total: number) => Promise<void> },
): Promise<ImportReport | undefined> {
  const [stored] = await em.execute<StoredImport[]>(
    `select kind, content, dry_run, create_suppliers, requested_by, correlation_id, state, report
       from csv_import where id = ?`,
    [id],
  );
  if (!stored) return undefined;
  if (stored.state === 'completed' || stored.state === 'failed') return stored.report ?? undefined;
  const total = estimateRows(Buffer.from(stored.content));
  await em.execute(
    `update csv_import set state = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()),
            rows_total = ?, rows_read = 0, updated_at = now() where id = ?`,
    [total, id],
  );
  const kind = IMPORT_KINDS[stored.kind];
  const report: ImportReport = {
    created: 0,
    updated: 0,
    unchanged: 0,
    rejectedCount: 0,
    rejected: [],
    applied: false,
  };
  const reject = (rejection: RowRejection) => {
    report.rejectedCount++;
    if (report.rejected.length < MAX_LISTED_REJECTIONS) report.rejected.push(rejection);
  };
  const progressEm = em.fork();
  const progress = async (read: number) => {
    await progressEm.execute('update csv_import set rows_read = ?, updated_at = now() where id = ?', [
      read,
      id,
    ]);
    await options.onProgress?.(read, total);
  };
  const eventIds: string[] = [];
  try {
    await em.transactional(async tx => {
      // One run at a time per import (a stalled job handed to a second worker waits here, then finds it done).
      await tx.execute('select pg_advisory_xact_lock(?, ?)', [IMPORT_LOCK_NS, id]);
      const [now] = await tx.execute<{ state: string }[]>('select state from csv_import where id = ?', [id]);
      if (now.state === 'completed') throw new AlreadyDone();
      const run: ImportRun = {
        write: { user: stored.requested_by, correlationId: stored.correlation_id },
        createSuppliers: stored.create_suppliers,
        isKey: options.isKey,
        seen: new Map(),
        suppliers: new Map(),
      };
      let read = 0;
      const file = await openCsv(Buffer.from(stored.content), kind.columns);
      file.headerProblems.forEach(reject);
      const missing = kind.requiredColumns.filter(c => !file.columns.has(c));
      for (const column of missing)
        reject({ line: 1, column, messageKey: 'csv.import.column.missing', params: { column } });
      if (missing.length === 0)
        for await (const record of file.entries) {
          if ('messageKey' in record) reject(record);
          else
            try {
              const applied = await kind.apply(tx, record, run);
              report[applied.outcome]++;
              eventIds.push(...applied.eventIds);
            } catch (error) {
              if (!(error instanceof RowRejected)) throw error;
              for (const problem of error.problems) reject({ line: record.line, ...problem });
            }
          if (++read % PROGRESS_EVERY_ROWS === 0) await progress(read);
        }
      if (stored.dry_run || report.rejectedCount > 0) throw new Rollback();
      report.applied = true;
      await finish(tx, id, report);
    });
  } catch (error) {
    if (error instanceof AlreadyDone) return undefined;
    if (!(error instanceof Rollback)) throw error;
    eventIds.length = 0;
    await finish(em, id, report);
  }
  await options.onProgress?.(total, total);
  // One ring per consumer wakes it for every event the import wrote.
  await publishEvents(queues, eventIds);
  return report;
}

/** The last attempt failed for a reason that is not about the file: the import ends as failed. */
export async function markImportFailed(em: EntityManager, id: string, reason: string): Promise<void> {
  await em.execute(
    `update csv_import set state = 'failed', report = ?::jsonb, finished_at = now(), updated_at = now()
      where id = ? and state <> 'completed'`,
    [JSON.stringify({ error: reason }), id],
  );
}
