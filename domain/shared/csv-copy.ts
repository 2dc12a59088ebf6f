import { escapeLiteral } from 'pg';
import { isoSql, type SqlPart } from './sql.js';

/**
 * Exports written by PostgreSQL itself: `COPY (select <cells> ...) TO STDOUT WITH (FORMAT csv)` produces the
 * same bytes as the CSV writer of api/presenters/csv-response.ts when every cell is the text the writer would
 * write. Both quote a cell exactly when it holds the delimiter, a quote, CR or LF (COPY also quotes `\.` alone
 * on a line, which a row of several columns never is) and double its quotes. The differences are made up here:
 * text cells are neutralised in SQL (csv-cells.ts), an empty text is sent as NULL (COPY would quote it, the
 * writer leaves it empty, as it does null), and COPY's LF row ends become CRLF (CsvCopyOut).
 */

/**
 * neutraliseFormula's first characters as a regular expression (` ' = + @ tab CR -`; `\t` and `\r` are the
 * regex's own escapes, so the pattern is the same with or without standard_conforming_strings). A regex
 * match is cheaper per row in PostgreSQL than comparing ascii() with each code.
 */
const ESCAPED_START_SQL = `'^[''=+@\\t\\r-]'`;

/**
 * A text cell as the writer writes it: prefixed with `'` where neutraliseFormula would, and empty (NULL) for
 * both null and ''. `expression` is evaluated up to four times: pass a column, not a computation. Every
 * escaped character sorts before `A` byte-wise, so a cell that does not (most of them: the regex is the
 * dearer test) skips the regex.
 */
export const textCellSql = (expression: string): string =>
  `nullif(case when ${expression} < 'A' collate "C" and ${expression} ~ ${ESCAPED_START_SQL} ` +
  `then '''' || ${expression} else ${expression} end, '')`;

/**
 * A numeric(p,2) cell as the writer writes the JSON number it was mapped to: no trailing zeros (`12.30` ->
 * `12.3`, `5.00` -> `5`). Exact for any numeric of up to 15 digits, which JavaScript prints as it reads.
 */
export const decimalCellSql = (expression: string): string => `trim_scale(${expression})`;

/** One column of an export written by COPY: its header and the SQL of its cell (textCellSql, ...). */
export interface CsvCopyColumn {
  header: string;
  sql: string;
  /** A leadingTimestampColumn (its cell is finished by CsvCopyOut). */
  leadingTimestamp?: true;
}

/**
 * A timestamptz column, first in its export only, whose cells read as isoSql's (ISO-8601 UTC with
 * milliseconds). PostgreSQL writes the timestamp's own text output, in ISO style and UTC in the COPY's
 * transaction (RowStreams.copyOut), the cheapest text it has (to_char costs several times as much), and
 * CsvCopyOut rewrites it as ISO-8601 in place. Outside the years 1-9999 (where that text has another shape)
 * PostgreSQL writes isoSql's text itself.
 */
export const leadingTimestampColumn = (header: string, expression: string): CsvCopyColumn => ({
  header,
  sql:
    `case when ${expression} >= '0001-01-01 00:00:00+00' and ${expression} < '10000-01-01 00:00:00+00' ` +
    `then ${expression}::text else ${isoSql(expression)} end`,
  leadingTimestamp: true,
});

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
 * `COPY (select <cells>, null <rows>) TO STDOUT` in CSV with `delimiter`, no header (CsvCopyOut writes it).
 * `rows` is the rest of the select (`from ... where ... order by ...`) with its `?` parameters. The last,
 * always empty column makes every row end with the delimiter and LF: the byte CsvCopyOut turns into CR.
 */
export function copyCsvSql(columns: CsvCopyColumn[], rows: SqlPart, delimiter: string): string {
  if (columns.some((c, i) => c.leadingTimestamp && i > 0))
    throw new Error('copyCsvSql: a leading timestamp column must come first');
  const cells = columns.map(c => c.sql).join(', ');
  return `copy (select ${cells}, null::text ${inlineParams(rows)}) to stdout with (format csv, delimiter ${escapeLiteral(delimiter)})`;
}
