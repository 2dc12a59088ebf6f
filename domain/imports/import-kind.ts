import type Joi from 'joi';
import type { MessageParams } from '../shared/errors.js';
import { JOI_OPTIONS, toFieldError } from '../shared/joi-field-errors.js';
import type { SqlRun } from '../shared/native-transaction.js';
import type { WriteContext } from '../shared/write-context.js';

/** Why one row was not applied: its line, the column at fault (null: the whole row) and a message key. */
export interface RowRejection {
  line: number;
  column: string | null;
  messageKey: string;
  params?: MessageParams;
}

export type RowProblem = Omit<RowRejection, 'line'>;

/** A staged row's values in the order of `ImportKind.stagedColumns` (null: absent). */
export type StagedValues = (string | number | boolean | null)[];

export interface ImportOptions {
  write: WriteContext;
  createSuppliers: boolean;
}

/** What the rows that pass every check do. */
export interface ImportCounts {
  created: number;
  updated: number;
  unchanged: number;
}

/**
 * What is imported. A run stages every row that passes the API's own field rules into the temporary table
 * `import_row` (`line` + the staged columns), then checks the rows against each other and the database with
 * set-based SQL (rejections go to the temporary table `import_rejection`, the rows that pass to the
 * temporary table `import_plan` with their targets), and finally applies the plan in one transaction.
 */
export interface ImportKind {
  columns: readonly string[];
  /** Columns the header must name. */
  requiredColumns: readonly string[];
  /** `import_row` columns after `line`, in COPY order: `[name, SQL type]`. */
  stagedColumns: readonly (readonly [string, string])[];
  /** A row's cells (blank ones left out) -> its staged values, or the problems of its fields. */
  stage(values: Record<string, string>, isKey: (key: string) => boolean): StagedValues | RowProblem[];
  /** Fills `import_plan` and `import_rejection` from `import_row`; answers what the accepted rows would do. */
  validate(sql: SqlRun, options: ImportOptions): Promise<ImportCounts>;
  /**
   * Inside the apply transaction: locks the rows it changes in id order, writes them and their outbox events
   * (set-based), answers what it did. Throws ImportConflict when the database moved away from the plan.
   */
  apply(sql: SqlRun, options: ImportOptions): Promise<ImportCounts & { events: number }>;
}

/** The database changed between validation and apply (a target deleted): validate again. */
export class ImportConflict extends Error {}

/** Validates a row's cells with the API's own joi schema: the converted value, or every failing field. */
export function checkFields<T>(
  schema: Joi.Schema,
  values: Record<string, unknown>,
  isKey: (key: string) => boolean,
): { value: T } | RowProblem[] {
  const { value, error } = schema.validate(values, JOI_OPTIONS);
  if (!error) return { value: value as T };
  return error.details.map(detail => {
    const field = toFieldError(detail, isKey);
    return { column: field.field, messageKey: field.messageKey, params: field.params };
  });
}

/** Cells as the API would receive them; a NUL character (PostgreSQL text cannot hold it) is refused. */
export function nulProblems(values: Record<string, string>): RowProblem[] {
  return Object.entries(values)
    .filter(([, cell]) => cell.includes('\u0000'))
    .map(([column]) => ({ column, messageKey: 'error.nul.character' }));
}

/** Counts of a `select created, updated, unchanged` row. */
export const toCounts = (row: Record<string, unknown>): ImportCounts => ({
  created: Number(row.created),
  updated: Number(row.updated),
  unchanged: Number(row.unchanged),
});

/**
 * Within-file clashes, shared by both kinds: a later row with the name, the sku or the target of an earlier row
 * is refused (`csv.import.row.duplicate` with the first line). SQL over a `ranked` CTE that has line, name,
 * sku, target and by_sku.
 */
export const DUPLICATE_WINDOWS = `
  min(line) over (partition by lower(name)) as name_first,
  case when sku is not null then min(line) over (partition by lower(sku)) end as sku_first,
  case when target is not null then min(line) over (partition by target) end as target_first`;
