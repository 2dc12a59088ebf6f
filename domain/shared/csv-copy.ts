import { escapeLiteral } from 'pg';
import type { SqlPart } from './sql.js';

/**
 * Exports written by PostgreSQL itself: `COPY (select <columns> ...) TO STDOUT WITH (FORMAT csv)` of the
 * stored columns, as they are (the cheapest statement there is: no expression, so no projection), finished
 * into the CSV writer's bytes (api/presenters/csv-response.ts) by CsvCopyOut as they stream. Both quote a
 * cell exactly when it holds the delimiter, a quote, CR or LF (COPY also quotes `\.` alone on a line, which a
 * row of several columns never is) and double its quotes. The differences are made up by CsvCopyOut, per the
 * kind of each column: timestamps (their text in ISO style and UTC) as ISO-8601 with milliseconds, text
 * cells neutralised (csv-cells.ts) and an empty text (which COPY quotes) left empty, decimals without
 * trailing zeros, and LF row ends as CRLF.
 */

/**
 * How CsvCopyOut finishes a column's cells: `timestamp` (a timestamptz) as isoSql's text; `text` as the
 * writer writes a string (neutraliseFormula; '' empty); `decimal` (a numeric) as the writer writes the JSON
 * number it was mapped to (no trailing zeros: exact for any numeric of up to 15 digits, which JavaScript
 * prints as it reads); `plain` (uuids, integers) as it is.
 */
export type CsvCopyKind = 'timestamp' | 'text' | 'decimal' | 'plain';

/** One column of an export written by COPY: its header, the stored column (SQL) and its kind. */
export interface CsvCopyColumn {
  header: string;
  sql: string;
  kind: CsvCopyKind;
}

/** `?` parameters as SQL literals (COPY takes no bind parameters); only strings and finite numbers. */
export function inlineParams(query: SqlPart): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const c of query.sql) {
    if (c === "'") quoted = !quoted;
    if (c !== '?' || quoted) {
      out += c;
      continue;
    }
    if (n >= query.params.length) throw new Error('inlineParams: more placeholders than parameters');
    const value = query.params[n++];
    if (typeof value === 'string') out += escapeLiteral(value);
    else if (typeof value === 'number' && Number.isFinite(value)) out += String(value);
    else throw new Error(`inlineParams: cannot inline a ${typeof value}`);
  }
  if (n !== query.params.length) throw new Error('inlineParams: more parameters than placeholders');
  return out;
}

/**
 * `COPY (select <columns> <rows>) TO STDOUT` in CSV with `delimiter`, no header (CsvCopyOut writes it).
 * `rows` is the rest of the select (`from ... where ... order by ...`) with its `?` parameters.
 */
export function copyCsvSql(columns: CsvCopyColumn[], rows: SqlPart, delimiter: string): string {
  const cells = columns.map(c => c.sql).join(', ');
  return `copy (select ${cells} ${inlineParams(rows)}) to stdout with (format csv, delimiter ${escapeLiteral(delimiter)})`;
}
