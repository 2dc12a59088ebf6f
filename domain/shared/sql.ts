/** Small SQL helpers for raw reads (MikroORM raw results return timestamptz and numeric as strings). */

/** A query as text with its `?` parameters, to run alone or to compose into a larger statement. */
export interface SqlPart {
  sql: string;
  params: unknown[];
}

/** A timestamptz expression rendered as ISO-8601 UTC with milliseconds, e.g. `2026-11-22T10:30:00.000Z`. */
export const isoSql = (expression: string): string =>
  `to_char(${expression} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** `%term%` for ILIKE/LIKE with the wildcards of the term escaped (backslash is the default escape). */
export const containsPattern = (term: string): string => `%${term.replace(/[\\%_]/g, c => `\\${c}`)}%`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else can never match a row (404, not a database cast error). */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/**
 * A lookup by (a prefix of) an index key as a LATERAL subquery (`select ... where key = outer.column`):
 * PostgreSQL runs it once per outer row (OFFSET 0 keeps it from being flattened into a join), so its cost
 * follows the rows looked up, not the table. A join may be planned as a scan of the whole table, and a generic
 * plan made while a table was small keeps reading all of it once it has grown (the outbox consumers keep such
 * plans, consumerPool: their marker update, planned on an almost empty outbox, read the whole table for every
 * batch once it had grown).
 */
export const byKey = (select: string): string => `(${select} offset 0)`;

/**
 * A PostgreSQL array literal of plain values (ids, integers, decimals: nothing to quote) for one `?::type[]`
 * parameter: the ORM's raw execution expands a JS array into a list of parameters.
 */
export const arrayLiteral = (values: readonly (string | number)[]): string => `{${values.join(',')}}`;
