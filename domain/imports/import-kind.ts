import type Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, type MessageParams } from '../shared/errors.js';
import { JOI_OPTIONS, toFieldError } from '../shared/joi-field-errors.js';
import type { WriteContext } from '../shared/write-context.js';
import type { CsvRecord } from './csv-records.js';

/** Why one row was not applied: its line, the column at fault (null: the whole row) and a message key. */
export interface RowRejection {
  line: number;
  column: string | null;
  messageKey: string;
  params?: MessageParams;
}

export type RowOutcome = 'created' | 'updated' | 'unchanged';

/** A row that cannot be applied; the import goes on to report every other row too. */
export class RowRejected extends Error {
  constructor(readonly problems: Omit<RowRejection, 'line'>[]) {
    super('row rejected');
  }
}

/** State of one run of an import, shared by its rows. */
export interface ImportRun {
  write: WriteContext;
  createSuppliers: boolean;
  /** Which message keys the catalog has (joi errors fall back to generic keys, as in the API). */
  isKey: (key: string) => boolean;
  /** First line of each row key (lower-case sku or name) seen so far: a file names an item once. */
  seen: Map<string, number>;
  /** Supplier ids by lower-case name, looked up or created during this run. */
  suppliers: Map<string, string>;
}

/** What is imported: the columns read and how one row is validated and applied inside the transaction. */
export interface ImportKind {
  columns: readonly string[];
  /** Columns the header must name. */
  requiredColumns: readonly string[];
  apply(
    tx: EntityManager,
    record: CsvRecord,
    run: ImportRun,
  ): Promise<{ outcome: RowOutcome; eventIds: string[] }>;
}

/** Validates a row's cells with the API's own joi schema; every failing field becomes a rejection. */
export function validateRow<T>(schema: Joi.Schema, values: Record<string, unknown>, run: ImportRun): T {
  const { value, error } = schema.validate(values, JOI_OPTIONS);
  if (error)
    throw new RowRejected(
      error.details.map(detail => {
        const field = toFieldError(detail, run.isKey);
        return { column: field.field, messageKey: field.messageKey, params: field.params };
      }),
    );
  return value as T;
}

/** Runs one use case for a row: a domain refusal (409, 404, ...) becomes a rejection of `column`. */
export async function refusedAs<T>(column: (error: AppError) => string | null, work: () => Promise<T>) {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new RowRejected([{ column: column(error), messageKey: error.messageKey, params: error.params }]);
  }
}

/** Cells as the API would receive them: an empty cell is an absent value; a NUL character is refused. */
export function cellValues(record: CsvRecord, columns: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  const nul: string[] = [];
  for (const column of columns) {
    const cell = record.cells.get(column);
    if (cell?.includes('\u0000')) nul.push(column);
    else if (cell !== undefined && cell.trim() !== '') values[column] = cell;
  }
  // PostgreSQL text cannot hold NUL: refused like the API refuses it.
  if (nul.length > 0)
    throw new RowRejected(nul.map(column => ({ column, messageKey: 'error.nul.character' })));
  return values;
}

/** Marks a row's keys (name, sku) as seen; a later row with a key seen before is refused. */
export function claimRowKeys(run: ImportRun, record: CsvRecord, keys: [column: string, key: string][]): void {
  const problems = keys.flatMap(([column, key]) => {
    const first = run.seen.get(key);
    return first === undefined
      ? []
      : [{ column, messageKey: 'csv.import.row.duplicate', params: { line: first } }];
  });
  if (problems.length > 0) throw new RowRejected(problems);
  for (const [, key] of keys) run.seen.set(key, record.line);
}
