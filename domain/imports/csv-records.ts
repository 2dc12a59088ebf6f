import { Readable } from 'node:stream';
import { parse, type CsvError, type Info } from 'csv-parse';
import type { MessageParams } from '../shared/errors.js';
import { restoreFormula } from '../shared/csv-cells.js';

/** One data row of an import file: its first line in the file and its non-blank cells by known column name. */
export interface CsvRecord {
  line: number;
  cells: Map<string, string>;
}

/** Why a line of the file cannot be read as a row: the column at fault (null: the whole row) and a message key. */
export interface CsvProblem {
  line: number;
  column: string | null;
  messageKey: string;
  params?: MessageParams;
}

/** `;` when the header line separates with semicolons (spreadsheet locales with a decimal comma), else `,`. */
export function detectDelimiter(text: string): ',' | ';' {
  const header = text.slice(0, Math.max(0, text.search(/\r|\n/)) || text.length);
  const count = (c: string) => header.split(c).length - 1;
  return count(';') > count(',') ? ';' : ',';
}

/** Roughly how many data rows `content` holds (line ends; a quoted cell with line breaks counts more). */
export function estimateRows(content: Buffer): number {
  let lines = 0;
  for (let at = content.indexOf(10); at !== -1; at = content.indexOf(10, at + 1)) lines++;
  return Math.max(0, lines - 1);
}

const isBlank = (record: string[]) => record.every(cell => cell.trim() === '');

/**
 * An opened import file: problems of its header (a known column named twice, case-insensitively), the known
 * columns it names (unknown columns are ignored), and its entries in file order: rows, or problems of lines
 * that cannot be rows (more cells than the header names; text that is not CSV, after which nothing more is
 * read, since the rest cannot be split into rows reliably). Blank lines, and lines of blank cells only, are
 * skipped. Cells lose the `'` an export put in front of formula-like text; blank cells are left out.
 */
export interface CsvFile {
  headerProblems: CsvProblem[];
  columns: Set<string>;
  entries: AsyncGenerator<CsvRecord | CsvProblem, void, undefined>;
}

/** Where csv-parse found the file unreadable: its message (which quotes the cell) is never kept. */
interface ParseError {
  line: number;
  emptyLines: number;
  index: number | undefined;
  code: string;
}

const parseError = (error: CsvError): ParseError => {
  const e = error as CsvError & { lines: number; empty_lines: number; column?: number | string };
  return {
    line: e.lines,
    emptyLines: e.empty_lines,
    index: typeof e.column === 'number' ? e.column : undefined,
    code: e.code,
  };
};

/**
 * A parse error as a problem of its row's first line (`line`) and column (named by the header when it has
 * that column).
 */
function malformed(error: ParseError, header: string[] | undefined, line: number): CsvProblem {
  const { index } = error;
  const column = index === undefined ? null : (header?.[index]?.trim() ?? `#${index + 1}`);
  return { line, column, messageKey: 'csv.import.malformed', params: { detail: error.code } };
}

/** The rest of a source after its first chunk (already taken for the delimiter), then its other chunks. */
async function* resumed(first: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield first;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** Opens a file read in chunks (`source`): the parser streams it with backpressure, never the whole file. */
export async function openCsv(
  source: AsyncIterable<Buffer>,
  knownColumns: readonly string[],
): Promise<CsvFile> {
  const byLowerName = new Map(knownColumns.map(c => [c.toLowerCase(), c]));
  const chunks = source[Symbol.asyncIterator]();
  const firstChunk = await chunks.next();
  const head = firstChunk.done ? Buffer.alloc(0) : firstChunk.value;
  let header: string[] | undefined;
  // csv-parse goes on after an error (skipping the record), so the rows before it still arrive; the first
  // error is where the file stops being readable.
  let firstError: ParseError | undefined;
  const parser = parse({
    bom: true,
    delimiter: detectDelimiter(head.toString('utf8').replace(/^\uFEFF/, '')),
    relax_column_count: true,
    skip_empty_lines: true,
    info: true,
    skip_records_with_error: true,
    on_skip: error => {
      if (error && !firstError) firstError = parseError(error);
      return undefined;
    },
  });
  const input = Readable.from(resumed(head, chunks), { objectMode: false });
  input.on('error', error => parser.destroy(error));
  input.pipe(parser);
  const iterator = (parser as AsyncIterable<{ record: string[]; info: Info }>)[Symbol.asyncIterator]();
  let lastLine = 0;
  let emptyLines = 0;
  /** The next record with its first line, the problem where the file stops being readable, or undefined. */
  const next = async (): Promise<{ record: string[]; line: number } | CsvProblem | undefined> => {
    const result = await iterator.next();
    if (firstError && (result.done || result.value.info.lines >= firstError.line)) {
      if (!result.done) parser.destroy();
      return malformed(firstError, header, lastLine + 1 + (firstError.emptyLines - emptyLines));
    }
    if (result.done) return undefined;
    const { record, info } = result.value;
    const line = lastLine + 1 + (info.empty_lines - emptyLines);
    lastLine = info.lines;
    emptyLines = info.empty_lines;
    return { record, line };
  };
  const first = await next();
  const headerProblems: CsvProblem[] = [];
  let columns: (string | undefined)[] = [];
  if (first && 'messageKey' in first) headerProblems.push(first);
  else if (first) {
    header = first.record;
    columns = header.map(h => byLowerName.get(h.trim().toLowerCase()));
    columns.forEach((column, i) => {
      if (column && columns.indexOf(column) < i)
        headerProblems.push({
          line: first.line,
          column,
          messageKey: 'csv.import.column.duplicate',
          params: { column },
        });
    });
  }
  const width = columns.length;
  async function* entries(): AsyncGenerator<CsvRecord | CsvProblem, void, undefined> {
    if (headerProblems.length > 0) return;
    for (let row = await next(); row; row = await next()) {
      if ('messageKey' in row) {
        yield row;
        return;
      }
      if (isBlank(row.record)) continue;
      if (row.record.length > width) {
        yield {
          line: row.line,
          column: `#${width + 1}`,
          messageKey: 'csv.import.row.too.many.cells',
          params: { cells: row.record.length, columns: width },
        };
        continue;
      }
      const cells = new Map<string, string>();
      columns.forEach((name, i) => {
        const cell = row.record[i];
        if (name && cell !== undefined && cell.trim() !== '') cells.set(name, restoreFormula(cell));
      });
      yield { line: row.line, cells };
    }
  }
  return {
    headerProblems,
    columns: new Set(columns.filter((c): c is string => c !== undefined)),
    entries: entries(),
  };
}
