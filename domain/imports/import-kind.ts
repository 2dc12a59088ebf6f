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
 * is refused (`csv.import.row.duplicate` with the first line). Hash aggregates keep only the keys named more
 * than once (no sort of the whole file); the plan's rows get `name_first`, `sku_first` and `target_first`
 * where they repeat an earlier row.
 */
export async function markDuplicates(sql: SqlRun): Promise<void> {
  await sql(
    'alter table import_plan add column name_first integer, add column sku_first integer, add column target_first integer',
  );
  for (const [column, key] of [
    ['name_first', 'lower(name)'],
    ['sku_first', 'lower(sku)'],
    ['target_first', 'target'],
  ])
    await sql(`
      update import_plan x set ${column} = d.first
        from (select ${key} as k, min(line) as first from import_plan where ${key} is not null
               group by 1 having count(*) > 1) d
       where ${key.replace(/(name|sku|target)/, 'x.$1')} = d.k and x.line > d.first`);
}

/**
 * The rejections of the plan's rows that have a problem (`suspect`), the first problem of each in the order
 * of `problems` (SQL `values` rows of (position, column, key, params, hit) over plan row `x` and the row's
 * `dup` / `same_target` flags).
 */
export const rejectionsSql = (suspect: string, problems: string) => `
insert into import_rejection (line, position, "column", message_key, params)
select x.line, p.position, p.col, p.key, p.params
  from import_plan x
 cross join lateral (select x.name_first is not null or x.sku_first is not null as dup,
                            x.target_first is not null as same_target) d
 cross join lateral (values
   (1, 'name', 'csv.import.row.duplicate', jsonb_build_object('line', x.name_first), x.name_first is not null),
   (2, 'sku', 'csv.import.row.duplicate', jsonb_build_object('line', x.sku_first), x.sku_first is not null),
   (3, case when x.by_sku then 'sku' else 'name' end, 'csv.import.row.duplicate',
       jsonb_build_object('line', x.target_first), not d.dup and d.same_target),
   ${problems}
 ) p(position, col, key, params, hit)
 where (x.name_first is not null or x.sku_first is not null or x.target_first is not null or ${suspect})
   and p.hit`;

/** What the accepted rows of the plan would do to `table` (aliased `alias`) given the SQL test `changes`. */
export const countPlanSql = (table: string, alias: string, changes: string) => `
select count(*) filter (where x.target is null) as created,
       count(*) filter (where x.target is not null and ${changes}) as updated,
       count(*) filter (where x.target is not null and not ${changes}) as unchanged
  from import_plan x left join ${table} ${alias} on ${alias}.id = x.target`;

/**
 * Locks the rows of `table` the plan changes, in id order (so two imports over the same rows cannot
 * deadlock); answers how many the plan expects and how many are still there.
 */
export const lockTargetsSql = (table: string) => `
select (select count(*) from import_plan where target is not null)::int as expected,
       (select count(*) from (select t.id from ${table} t
                               where t.id in (select target from import_plan where target is not null)
                               order by t.id for update) l)::int as locked`;

/**
 * The plan's known rows: locked in id order (`lockSql`, a lockTargetsSql), then written by `updateSql` with
 * `params` (a statement answering `updated` and `events`); the known rows it left as they were are `unchanged`.
 * A plan of new rows only has nothing to update, so no pass over the plan and the table is made for it. Throws
 * ImportConflict (`gone`) when a target was deleted since the validation.
 */
export async function updateTargets(
  sql: SqlRun,
  lockSql: string,
  updateSql: string,
  params: unknown[],
  gone: string,
): Promise<{ updated: number; unchanged: number; events: number }> {
  const [lock] = await sql<{ expected: number; locked: number }>(lockSql);
  if (lock.locked !== lock.expected) throw new ImportConflict(gone);
  if (lock.expected === 0) return { updated: 0, unchanged: 0, events: 0 };
  const [written] = await sql<{ updated: number; events: number }>(updateSql, params);
  return { ...written, unchanged: lock.expected - written.updated };
}
