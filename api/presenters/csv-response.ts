import { Transform, type Readable } from 'node:stream';
import type { Request, Response } from 'express';
import Joi from 'joi';
import { stringify } from 'csv-stringify';
import { CSV_DELIMITERS, neutraliseFormula, type CsvColumn } from '../../domain/shared/csv-cells.js';
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
 * Streams an RFC 4180 CSV download: UTF-8 with a BOM (so spreadsheet programs detect the encoding) and a
 * header row, CRLF line ends, any cell with a delimiter, quote, CR or LF quoted, text cells that a
 * spreadsheet would run as a formula prefixed with `'`. The file name carries today's date.
 */
export async function sendCsv<T>(
  req: Request,
  res: Response,
  source: Readable,
  options: { columns: CsvColumn<T>[]; baseName: string; delimiter: string },
): Promise<void> {
  const day = new Date().toISOString().slice(0, 10);
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${options.baseName}-${day}.csv"`);
  const writer = stringify({
    header: true,
    bom: true,
    columns: options.columns.map(c => ({ key: c.key, header: c.header })),
    delimiter: options.delimiter,
    record_delimiter: 'windows',
    quoted_match: /[\r\n]/,
    cast: { string: neutraliseFormula },
  });
  await sendStream(req, res, source, unbatch(), writer);
}
