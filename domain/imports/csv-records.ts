import { parse, type Info } from 'csv-parse';
import { restoreFormula } from '../shared/csv-cells.js';

/** One data row of an import file: its first line in the file and its cells under their known column names. */
export interface CsvRecord {
  line: number;
  cells: Map<string, string>;
}

/** A file that cannot be read as CSV from some line on (unclosed quote, stray quote, ...). */
export class CsvFormatError extends Error {
  constructor(
    readonly line: number,
    readonly detail: string,
  ) {
    super(`malformed CSV at line ${line}: ${detail}`);
  }
}

/** `;` when the header line separates with semicolons (spreadsheet locales with a decimal comma), else `,`. */
export function detectDelimiter(text: string): ',' | ';' {
  const header = text.slice(0, Math.max(0, text.search(/\r|\n/)) || text.length);
  const count = (c: string) => header.split(c).length - 1;
  return count(';') > count(',') ? ';' : ',';
}

const parser = (text: string) =>
  parse(text, {
    bom: true,
    delimiter: detectDelimiter(text.replace(/^\uFEFF/, '')),
    relax_column_count: true,
    skip_empty_lines: true,
    info: true,
  });

/** Data rows in the file (the header excluded); a malformed file counts up to its first error. */
export async function countRecords(text: string): Promise<number> {
  let n = -1;
  try {
    for await (const _ of parser(text)) n++;
  } catch {
    // The run reports the error with its line.
  }
  return Math.max(0, n);
}

/** An opened import file: the known columns its header names, then its data rows. */
export interface CsvFile {
  columns: Set<string>;
  rows: AsyncGenerator<CsvRecord, void, undefined>;
}

const formatError = (error: unknown, line: number) => {
  const e = error as { code?: string; lines?: number };
  return e.code?.startsWith('CSV_') ? new CsvFormatError(e.lines ?? line, e.code) : error;
};

/**
 * Opens `text`: the header row names the columns (case-insensitively, any order; unknown columns are
 * ignored); each later row comes with its first line number. Cells lose the `'` an export put in front of
 * formula-like text. Throws CsvFormatError with the line of the first unreadable row (also while iterating).
 */
export async function openCsv(text: string, knownColumns: readonly string[]): Promise<CsvFile> {
  const byLowerName = new Map(knownColumns.map(c => [c.toLowerCase(), c]));
  const iterator = (parser(text) as AsyncIterable<{ record: string[]; info: Info }>)[Symbol.asyncIterator]();
  let lastLine = 0;
  let emptyLines = 0;
  const next = async () => {
    try {
      const result = await iterator.next();
      if (result.done) return undefined;
      const { record, info } = result.value;
      const line = lastLine + 1 + (info.empty_lines - emptyLines);
      lastLine = info.lines;
      emptyLines = info.empty_lines;
      return { record, line };
    } catch (error) {
      throw formatError(error, lastLine + 1);
    }
  };
  const header = await next();
  const columns = (header?.record ?? []).map(h => byLowerName.get(h.trim().toLowerCase()));
  async function* rows(): AsyncGenerator<CsvRecord, void, undefined> {
    for (let row = await next(); row; row = await next()) {
      const cells = new Map<string, string>();
      columns.forEach((name, i) => {
        if (name) cells.set(name, restoreFormula(row.record[i] ?? ''));
      });
      yield { line: row.line, cells };
    }
  }
  return { columns: new Set(columns.filter((c): c is string => c !== undefined)), rows: rows() };
}
