import { Transform, type Readable } from 'node:stream';
import type { Request, Response } from 'express';
import Joi from 'joi';
import { stringify, type Options } from 'csv-stringify';
import { stringify as stringifySync } from 'csv-stringify/sync';
import { CSV_DELIMITERS, neutraliseFormula, type CsvColumn } from '../../domain/shared/csv-cells.js';
import { copyCsvSql, type CsvCopyColumn } from '../../domain/shared/csv-copy.js';
import { CsvCopyOut } from '../../domain/shared/csv-copy-out.js';
import type { SqlPart } from '../../domain/shared/sql.js';
import { sendStream } from './stream-response.js';

/** `?delimiter=` of every export. */
export const csvDelimiterQuery = {
  delimiter: Joi.string()
    .valid(...CSV_DELIMITERS)
    .default(',')
    .messages({ 'any.only': 'csv.delimiter.invalid' }),
};

/** How an export is documented: an RFC 4180 text body. */
export const csvResponse = (description: string) => ({
  description,
  contentType: 'text/csv',
  schema: Joi.string(),
});

/** Row batches -> one record at a time (the CSV writer takes records). */
const unbatch = () =>
  new Transform({
    objectMode: true,
    transform(batch: unknown[], _encoding, done) {
      for (const row of batch) this.push(row);
      done();
    },
  });

/**
 * The CSV writer of every export: RFC 4180, UTF-8 with a BOM (so spreadsheet programs detect the encoding) and
 * a header row, CRLF line ends, any cell with a delimiter, quote, CR or LF quoted, text cells that a spreadsheet
 * would run as a formula prefixed with `'`. Exports written by COPY (sendCopyCsv) produce the same bytes.
 */
export const csvWriterOptions = (headers: { key: string; header: string }[], delimiter: string): Options => ({
  header: true,
  bom: true,
  columns: headers.map(c => ({ key: c.key, header: c.header })),
  delimiter,
  record_delimiter: 'windows',
  quoted_match: /[\r\n]/,
  cast: { string: neutraliseFormula },
});

function startCsv(res: Response, baseName: string): void {
  const day = new Date().toISOString().slice(0, 10);
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${baseName}-${day}.csv"`);
}

/** Streams a CSV download (csvWriterOptions) of mapped rows. The file name carries today's date. */
export async function sendCsv<T>(
  req: Request,
  res: Response,
  source: Readable,
  options: { columns: CsvColumn<T>[]; baseName: string; delimiter: string },
): Promise<void> {
  startCsv(res, options.baseName);
  await sendStream(
    req,
    res,
    source,
    unbatch(),
    stringify(csvWriterOptions(options.columns, options.delimiter)),
  );
}

/** A small CSV answer built whole (csvWriterOptions), not a counted stream: an order's lines. */
export function sendCsvRows<T>(
  res: Response,
  rows: T[],
  options: { columns: CsvColumn<T>[]; baseName: string; delimiter: string },
): void {
  startCsv(res, options.baseName);
  res.send(stringifySync(rows, csvWriterOptions(options.columns, options.delimiter)));
}

/**
 * The COPY of an export written by PostgreSQL (copyCsvSql of `columns` over `rows`) as the query to run on a
 * row stream's connection (RowStreams.copyOut): its readable yields the writer's BOM and header row, then the
 * rows with CRLF ends. Same bytes as sendCsv of the same cells.
 */
export function csvCopyOut(columns: CsvCopyColumn[], rows: SqlPart, delimiter: string): CsvCopyOut {
  const headers = columns.map(c => ({ key: c.header, header: c.header }));
  const head = Buffer.from(stringifySync([], csvWriterOptions(headers, delimiter)));
  return new CsvCopyOut(
    copyCsvSql(columns, rows, delimiter),
    head,
    delimiter,
    columns.map(c => c.kind),
  );
}

/** Streams a CSV download whose bytes are all in `source` (a csvCopyOut's). The file name carries today's date. */
export async function sendCopyCsv(
  req: Request,
  res: Response,
  source: Readable,
  options: { baseName: string },
): Promise<void> {
  startCsv(res, options.baseName);
  await sendStream(req, res, source);
}
