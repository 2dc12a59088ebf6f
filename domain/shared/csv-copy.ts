import { Transform } from 'node:stream';
import { escapeLiteral } from 'pg';
import type { SqlPart } from './sql.js';

/**
 * Exports written by PostgreSQL itself: `COPY (select <cells> ...) TO STDOUT WITH (FORMAT csv)` produces the
 * same bytes as the CSV writer of api/presenters/csv-response.ts when every cell is the text the writer would
 * write. Both quote a cell exactly when it holds the delimiter, a quote, CR or LF (COPY also quotes `\.` alone
 * on a line, which a row of several columns never is) and double its quotes. The differences are made up here:
 * text cells are neutralised in SQL (csv-cells.ts), an empty text is sent as NULL (COPY would quote it, the
 * writer leaves it empty, as it does null), and COPY's LF row ends become CRLF (csvRowEnds).
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
 * `COPY (select <cells>, null <rows>) TO STDOUT` in CSV with `delimiter`, no header (csvRowEnds writes it).
 * `rows` is the rest of the select (`from ... where ... order by ...`) with its `?` parameters. The last,
 * always empty column makes every row end with the delimiter and LF: the byte csvRowEnds turns into CR.
 */
export function copyCsvSql(columns: CsvCopyColumn[], rows: SqlPart, delimiter: string): string {
  const cells = columns.map(c => c.sql).join(', ');
  return `copy (select ${cells}, null::text ${inlineParams(rows)}) to stdout with (format csv, delimiter ${escapeLiteral(delimiter)})`;
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const CR_ONLY = Buffer.from([CR]);

/**
 * COPY's CSV bytes (of copyCsvSql) -> the export's: `head` (BOM and header row) first, then each row with a
 * CRLF end: the delimiter before each row's LF (that of the empty last column) is overwritten with CR, in the
 * chunk itself, so nothing is allocated or copied per chunk (every buffer allocated here would wait outside
 * the JavaScript heap for a full collection). An LF inside a quoted cell is left alone: a quote toggles
 * "inside a cell" (a doubled quote toggles it twice), tracked across chunks with indexOf (native). A chunk
 * that ends with the delimiter holds it back until the next chunk shows whether an LF follows.
 */
export function csvRowEnds(head: Buffer, delimiter: string): Transform {
  const held = Buffer.from(delimiter);
  if (held.length !== 1) throw new Error('csvRowEnds: the delimiter must be one byte');
  const delimiterByte = held[0];
  let quoted = false;
  let headSent = false;
  let holding = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!headSent) {
        this.push(head);
        headSent = true;
      }
      if (chunk.length === 0) return done();
      if (holding) {
        holding = false;
        this.push(chunk[0] === LF ? CR_ONLY : held);
      }
      let pos = 0;
      let quote = chunk.indexOf(QUOTE);
      let lf = chunk.indexOf(LF);
      for (;;) {
        if (quoted) {
          if (quote < 0) break;
          quoted = false;
          pos = quote + 1;
          quote = chunk.indexOf(QUOTE, pos);
          continue;
        }
        if (lf >= 0 && lf < pos) lf = chunk.indexOf(LF, pos);
        // A quote before the next LF (or after the last one) opens a cell, even one the next chunk ends.
        if (quote >= 0 && (lf < 0 || quote < lf)) {
          quoted = true;
          pos = quote + 1;
          quote = chunk.indexOf(QUOTE, pos);
          continue;
        }
        if (lf < 0) break;
        // A row's end: the byte before it is the last column's delimiter (or was held back, see above).
        if (lf > 0) chunk[lf - 1] = CR;
        pos = lf + 1;
        lf = chunk.indexOf(LF, pos);
      }
      if (!quoted && chunk[chunk.length - 1] === delimiterByte) {
        holding = true;
        return done(null, chunk.subarray(0, chunk.length - 1));
      }
      done(null, chunk);
    },
    flush(done) {
      if (!headSent) this.push(head);
      done(null, holding ? held : undefined);
    },
  });
}
