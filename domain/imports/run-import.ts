import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { QueueProducer } from '../queues/queue-producer.js';
import { ringDoorbells } from '../outbox/publish-events.js';
import { nativePool, type SqlRun } from '../shared/native-transaction.js';
import { estimateRows } from './csv-records.js';
import { readPart, storedFile } from './stored-file.js';
import { IMPORT_KINDS, type ImportKindName } from './import-kinds.js';
import {
  ImportConflict,
  type ImportCounts,
  type ImportKind,
  type ImportOptions,
  type RowRejection,
} from './import-kind.js';
import { MAX_LISTED_REJECTIONS, stageImport, type EarlyRejections } from './stage-import.js';

/** The outcome of an import, the same for its dry run and its real run. */
export interface ImportReport extends ImportCounts {
  /** Every rejected row counts; the first MAX_LISTED_REJECTIONS are listed. */
  rejectedCount: number;
  rejected: RowRejection[];
  /** True when the changes were committed (a real run without rejected rows). */
  applied: boolean;
}

export interface RunImportOptions {
  isKey: (key: string) => boolean;
  onProgress?: (read: number, total: number) => Promise<void>;
  /** Aborted when the process shuts down: the run stops where it is and the import is queued again. */
  signal?: AbortSignal;
}

/** The run stopped because the import was cancelled. */
class Cancelled extends Error {}
/** The run stopped because the process is shutting down; the import is queued again. */
export class HandedBack extends Error {}

const IMPORT_LOCK_NS = 740020;
/** Validation and apply are repeated this often when the database moved between them. */
const APPLY_ATTEMPTS = 5;
/** How long the apply waits for one of its rows (an adjust in flight, another import's apply). */
const APPLY_LOCK_TIMEOUT = '20s';
/** PostgreSQL errors after which the plan is checked again: unique, deadlock, lock timeout, serialization. */
const WORK_MEM = '128MB';
const STATEMENT_TIMEOUT = '10min';
const RETRYABLE = new Set(['23505', '40P01', '55P03', '40001']);

interface StoredImport {
  kind: ImportKindName;
  size: number;
  dry_run: boolean;
  create_suppliers: boolean;
  requested_by: string;
  correlation_id: string | null;
  state: string;
  report: ImportReport | null;
}

const TEMP_TABLES = 'import_row, import_plan, import_rejection';

async function createTempTables(sql: SqlRun, kind: ImportKind): Promise<void> {
  await sql(`drop table if exists ${TEMP_TABLES}`);
  const columns = kind.stagedColumns.map(([name, type]) => `${name} ${type}`).join(', ');
  await sql(`create temp table import_row (line integer primary key, ${columns})`);
  await sql(
    `create temp table import_rejection (line integer not null, position integer not null, "column" text,
                                         message_key text not null, params jsonb)`,
  );
}

/** The report: the early rejections and the database's, in line order, the first MAX_LISTED_REJECTIONS listed. */
async function buildReport(sql: SqlRun, early: EarlyRejections, counts: ImportCounts): Promise<ImportReport> {
  const [{ n }] = await sql<{ n: string }>('select count(*) as n from import_rejection');
  const listed = await sql<{ line: number; column: string | null; key: string; params: object | null }>(
    `select line, "column", message_key as key, params from import_rejection
      order by line, position limit ${MAX_LISTED_REJECTIONS}`,
  );
  const rejected = [
    ...early.listed,
    ...listed.map(r => ({
      line: r.line,
      column: r.column,
      messageKey: r.key,
      ...(r.params ? { params: r.params as RowRejection['params'] } : {}),
    })),
  ]
    .sort((a, b) => a.line - b.line)
    .slice(0, MAX_LISTED_REJECTIONS);
  return { ...counts, rejectedCount: early.count + Number(n), rejected, applied: false };
}

/** Ends the import as completed (only from `state`, so a cancelled import stays cancelled). */
const finishSql = (state: string) =>
  // clock_timestamp(): now() would be the start of the apply's transaction.
  `update csv_import set state = 'completed', report = $1::jsonb, finished_at = clock_timestamp(),
          updated_at = clock_timestamp(), rows_read = coalesce(rows_total, rows_read)
    where id = $2 and state = '${state}'`;

/** One run of an import: its connection (with the temporary tables), what is stored of it, its progress. */
interface ImportRun {
  em: EntityManager;
  id: string;
  options: RunImportOptions;
  client: pg.PoolClient;
  sql: SqlRun;
  /** Rows the run expects (an estimate until the file is staged). */
  total: number;
  /** Whether this run put the import in `running` (only such a run puts it back when handed back). */
  running: boolean;
}

/** How a run ended: its report (undefined: nothing to report) and the outbox events it wrote. */
interface RunOutcome {
  report: ImportReport | undefined;
  events: number;
}

/**
 * Runs one import (the worker's use case), set-based: the stored file is streamed into a temporary staging
 * table (COPY; the API's field rules on the way), checked against itself and the database with a few
 * statements (every rejected row with its line and column), and, in a real run without rejections, applied
 * in ONE short transaction that locks the rows it changes in id order and writes their outbox events as the
 * single-item use cases do. No row lock is held before the apply, so the API's writes to the same rows never
 * wait on a validation. The completed state commits with the changes, so a rerun after a crash finds it
 * done or starts again from the stored file: never applied twice. Cancelled (DELETE) before the apply:
 * nothing is applied.
 */
export async function runImport(
  em: EntityManager,
  queues: QueueProducer,
  id: string,
  options: RunImportOptions,
): Promise<ImportReport | undefined> {
  const run = await openRun(em, id, options);
  let outcome: RunOutcome;
  try {
    outcome = await runPhases(run);
  } catch (error) {
    if (error instanceof Cancelled) return undefined;
    if (options.signal?.aborted) await handBack(run);
    throw error;
  } finally {
    await closeRun(run);
  }
  await options.onProgress?.(run.total, run.total);
  // One ring per consumer wakes it for every event the import wrote.
  if (outcome.events > 0) await ringDoorbells(queues);
  return outcome.report;
}

/** The phases of a run, in order. */
async function runPhases(run: ImportRun): Promise<RunOutcome> {
  await takeRunLock(run);
  const stored = await loadImport(run);
  if (!stored || ['completed', 'failed', 'cancelled'].includes(stored.state))
    return { report: stored?.report ?? undefined, events: 0 };
  const first = await readPart(run.em, run.id, 0);
  if (!(await markRunning(run, stored, first))) return { report: undefined, events: 0 };
  const kind = IMPORT_KINDS[stored.kind];
  const early = await stageFile(run, kind, stored, first);
  return validateAndApply(run, kind, stored, early);
}

/**
 * The run's connection, out of the pool. A shutdown (the signal) stops the statement in flight; during the
 * apply that rolls the apply back whole (the process has a bounded time to exit, and the apply may be waiting
 * for rows other writers hold).
 */
async function openRun(
  em: EntityManager,
  id: string,
  options: RunImportOptions,
): Promise<ImportRun & { stop: () => void }> {
  const client = await (await nativePool(em)).connect();
  // Unnamed statements: the temporary tables are created anew by every run.
  const sql: SqlRun = async <R>(text: string, params: unknown[] = []) =>
    (await client.query(text, params)).rows as R[];
  const stop = () => {
    const pid = (client as pg.PoolClient & { processID: number }).processID;
    void em.execute('select pg_cancel_backend(?)', [pid]).catch(() => undefined);
  };
  options.signal?.addEventListener('abort', stop);
  return { em, id, options, client, sql, total: 0, running: false, stop };
}

async function closeRun(run: ImportRun & { stop?: () => void }): Promise<void> {
  if (run.stop) run.options.signal?.removeEventListener('abort', run.stop);
  await releaseClient(run.client, run.sql, run.id);
}

/**
 * One run at a time per import: a stalled job handed to a second worker waits here (beyond the pool's lock
 * timeout; the apply sets its own), then finds it done. The set-based checks hash whole tables: room for their
 * hash tables in memory; index lookups priced as the cached reads they are, so a small file looks its rows up
 * instead of scanning a large table; the COPY and the checks of a large file outlast the pool's per-statement
 * timeout (all reset on release).
 */
async function takeRunLock({ client, id }: ImportRun): Promise<void> {
  await client.query('set lock_timeout = 0');
  await client.query('select pg_advisory_lock($1, $2)', [IMPORT_LOCK_NS, id]);
  await client.query(`set work_mem = '${WORK_MEM}'`);
  await client.query('set random_page_cost = 1.1');
  await client.query(`set statement_timeout = '${STATEMENT_TIMEOUT}'`);
}

async function loadImport({ sql, id }: ImportRun): Promise<StoredImport | undefined> {
  const [stored] = await sql<StoredImport>(
    `select kind, size, dry_run, create_suppliers, requested_by, correlation_id, state, report
       from csv_import where id = $1`,
    [id],
  );
  return stored ? { ...stored, size: Number(stored.size) } : undefined;
}

/** Puts the import in `running` with an estimate of its rows (from its first part); false: not runnable. */
async function markRunning(run: ImportRun, stored: StoredImport, first: Buffer): Promise<boolean> {
  run.total = Math.round((estimateRows(first) * stored.size) / Math.max(1, first.length));
  const started = await run.sql(
    `update csv_import set state = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()),
            rows_total = $1, rows_read = 0, updated_at = now()
      where id = $2 and state in ('queued', 'running', 'applying') returning id`,
    [run.total, run.id],
  );
  run.running = started.length > 0;
  return run.running;
}

/** Progress on another connection (the run's is busy copying); throws when cancelled or shutting down. */
const progressOf =
  ({ em, id, options, total }: ImportRun) =>
  async (read: number) => {
    if (options.signal?.aborted) throw new HandedBack();
    const rows = await em.execute<{ state: string }[]>(
      'update csv_import set rows_read = ?, updated_at = now() where id = ? returning state',
      [read, id],
    );
    if (rows[0]?.state === 'cancelled') throw new Cancelled();
    await options.onProgress?.(read, total);
  };

/** Streams the stored file into `import_row`; answers the rejections found on the way. */
async function stageFile(
  run: ImportRun,
  kind: ImportKind,
  stored: StoredImport,
  first: Buffer,
): Promise<EarlyRejections> {
  const { sql, id } = run;
  await createTempTables(sql, kind);
  const { rows, early } = await stageImport(
    run.client,
    kind,
    storedFile(run.em, id, first, stored.size),
    run.options.isKey,
    progressOf(run),
  );
  await sql('analyze import_row');
  await sql('update csv_import set rows_total = $1, rows_read = $1, updated_at = now() where id = $2', [
    rows,
    id,
  ]);
  return early;
}

/**
 * Validates the staged rows; a dry run, or a file with rejections, ends there. Else the apply, validated again
 * when the database moved between the two (up to APPLY_ATTEMPTS times).
 */
async function validateAndApply(
  run: ImportRun,
  kind: ImportKind,
  stored: StoredImport,
  early: EarlyRejections,
): Promise<RunOutcome> {
  const importOptions = {
    write: { user: stored.requested_by, correlationId: stored.correlation_id },
    createSuppliers: stored.create_suppliers,
  };
  for (let attempt = 1; ; attempt++) {
    const report = await validate(run, kind, importOptions, early);
    if (stored.dry_run || report.rejectedCount > 0) {
      await finishWithoutApply(run, report);
      return { report, events: 0 };
    }
    await markApplying(run);
    const applied = await apply(run, kind, importOptions, report, attempt);
    if (applied) return applied;
    await run.sql(`update csv_import set state = 'running', updated_at = now() where id = $1`, [run.id]);
  }
}

async function validate(
  run: ImportRun,
  kind: ImportKind,
  importOptions: ImportOptions,
  early: EarlyRejections,
): Promise<ImportReport> {
  await run.sql('drop table if exists import_plan');
  await run.sql('truncate import_rejection');
  const counts = await kind.validate(run.sql, importOptions);
  const report = await buildReport(run.sql, early, counts);
  if (run.options.signal?.aborted) throw new HandedBack();
  return report;
}

async function finishWithoutApply(run: ImportRun, report: ImportReport): Promise<void> {
  const finished = await run.sql(`${finishSql('running')} returning id`, [JSON.stringify(report), run.id]);
  if (finished.length === 0) throw new Cancelled();
}

/** From here on a DELETE answers 409: the import is applied, or (on a conflict) validated again. */
async function markApplying(run: ImportRun): Promise<void> {
  const applying = await run.sql(
    `update csv_import set state = 'applying', updated_at = now() where id = $1 and state = 'running'
     returning id`,
    [run.id],
  );
  if (applying.length === 0) throw new Cancelled();
}

/**
 * The apply transaction, with the completed state; undefined when the database moved away from the plan
 * (validate again), an error when that happened APPLY_ATTEMPTS times or the failure is not about the plan.
 */
async function apply(
  { client, sql, id, options }: ImportRun,
  kind: ImportKind,
  importOptions: ImportOptions,
  validated: ImportReport,
  attempt: number,
): Promise<RunOutcome | undefined> {
  try {
    await client.query('begin');
    await sql(`set local lock_timeout = '${APPLY_LOCK_TIMEOUT}'`);
    // A shutdown that came while no statement ran (its cancel found nothing to stop) hands back here.
    if (options.signal?.aborted) throw new HandedBack();
    const { events, ...counts } = await kind.apply(sql, importOptions);
    const report = { ...validated, ...counts, applied: true };
    await sql(finishSql('applying'), [JSON.stringify(report), id]);
    await client.query('commit');
    return { report, events };
  } catch (error) {
    await client.query('rollback');
    const code = (error as { code?: string }).code;
    const retry = error instanceof ImportConflict || (code !== undefined && RETRYABLE.has(code));
    if (!retry) throw error;
    // The database's message may quote a cell (a unique key): the job's failure names the code only.
    if (attempt >= APPLY_ATTEMPTS)
      // eslint-disable-next-line preserve-caught-error -- the cause would put that message in the log
      throw new Error(`the import could not be applied (${code ?? 'conflict'})`);
    return undefined;
  }
}

/** A shutdown stopped the run: a run that had started the import puts it back in the queue. */
async function handBack(run: ImportRun): Promise<never> {
  // Only a run that had started it puts it back (not one still waiting for another run's lock).
  if (run.running)
    await run.em.execute(
      `update csv_import set state = 'queued', updated_at = now()
        where id = ? and state in ('running', 'applying')`,
      [run.id],
    );
  throw new HandedBack();
}

/** Drops the temporary tables and the run's lock; a connection that cannot is discarded, not pooled. */
async function releaseClient(client: pg.PoolClient, sql: SqlRun, id: string): Promise<void> {
  try {
    await sql(`drop table if exists ${TEMP_TABLES}`);
    await client.query('reset work_mem; reset random_page_cost; reset statement_timeout; reset lock_timeout');
    await client.query('select pg_advisory_unlock($1, $2)', [IMPORT_LOCK_NS, id]);
    client.release();
  } catch {
    client.release(true);
  }
}

/** The last attempt failed for a reason that is not about the file: the import ends as failed. */
export async function markImportFailed(em: EntityManager, id: string, reason: string): Promise<void> {
  await em.execute(
    `update csv_import set state = 'failed', report = ?::jsonb, finished_at = now(), updated_at = now()
      where id = ? and state not in ('completed', 'cancelled')`,
    [JSON.stringify({ error: reason }), id],
  );
}
