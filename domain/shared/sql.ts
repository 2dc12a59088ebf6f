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
