import { once } from 'node:events';
import type pg from 'pg';
import { copyIn } from '../shared/copy-in.js';
import { openCsv } from './csv-records.js';
import type { ImportKind, RowProblem, RowRejection, StagedValues } from './import-kind.js';

/** Rejections listed in a report (every one counts). */
export const MAX_LISTED_REJECTIONS = 1000;

/** Rejections found before the database sees the rows: the first listed, all counted. */
export interface EarlyRejections {
  listed: RowRejection[];
  count: number;
}

/** A value in COPY's text format: `\N` for null; backslash, tab, CR and LF escaped. */
const copyValue = (value: string | number | boolean | null): string =>
  value === null
    ? '\\N'
    : typeof value === 'string'
      ? value.replace(/[\\\t\r\n]/g, c =>
          c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\r' ? '\\r' : '\\n',
        )
      : String(value);

const isProblems = (staged: StagedValues | RowProblem[]): staged is RowProblem[] =>
  typeof staged[0] === 'object' && staged[0] !== null;

/** COPY bytes sent per write: small enough to be allocated and freed without growing the process. */
const BATCH_BYTES = 64 * 1024;

/**
 * Streams the file into the temporary table `import_row` with COPY: the header's problems and every row's
 * field problems (the API's own rules) are rejections, the other rows are staged with their line. Nothing is
 * held beyond a batch of COPY text and the first listed rejections. `onProgress` runs every `every` rows
 * (between batches, so it may throw to stop the run).
 */
export async function stageImport(
  client: pg.PoolClient,
  kind: ImportKind,
  content: AsyncIterable<Buffer>,
  isKey: (key: string) => boolean,
  onProgress: (rows: number) => Promise<void>,
): Promise<{ rows: number; early: EarlyRejections }> {
  const early: EarlyRejections = { listed: [], count: 0 };
  const reject = (rejection: RowRejection) => {
    early.count++;
    if (early.listed.length < MAX_LISTED_REJECTIONS) early.listed.push(rejection);
  };
  const file = await openCsv(content, kind.columns);
  file.headerProblems.forEach(reject);
  const missing = kind.requiredColumns.filter(c => !file.columns.has(c));
  for (const column of missing)
    reject({ line: 1, column, messageKey: 'csv.import.column.missing', params: { column } });
  if (file.headerProblems.length > 0 || missing.length > 0) return { rows: 0, early };

  const columns = ['line', ...kind.stagedColumns.map(([name]) => name)].join(', ');
  const copy = copyIn(client, `copy import_row (${columns}) from stdin`);
  // COPY text is written straight into a buffer of BATCH_BYTES (a new one per batch: the COPY stream holds a
  // written one until it is sent), not gathered as a string of many pieces that outlive young collections.
  let batch = Buffer.allocUnsafe(BATCH_BYTES);
  let filled = 0;
  let rows = 0;
  const send = async (bytes: Buffer) => {
    if (!copy.stream.write(bytes)) await Promise.race([once(copy.stream, 'drain'), copy.done]);
  };
  const flush = async () => {
    if (filled === 0) return;
    const full = batch.subarray(0, filled);
    batch = Buffer.allocUnsafe(BATCH_BYTES);
    filled = 0;
    await send(full);
  };
  /** Adds a row's text to the batch; a promise only when the batch had to be sent first. */
  const stageRow = (text: string): Promise<void> | undefined => {
    // A row's bytes are at most 3 per UTF-16 unit: most rows are known to fit without measuring them.
    if (text.length * 3 <= BATCH_BYTES - filled) {
      filled += batch.write(text, filled);
      return undefined;
    }
    return (async () => {
      const bytes = Buffer.byteLength(text);
      if (bytes > BATCH_BYTES - filled) await flush();
      if (bytes > BATCH_BYTES) return send(Buffer.from(text));
      filled += batch.write(text, filled);
    })();
  };
  try {
    for await (const entry of file.entries) {
      if ('messageKey' in entry) {
        reject(entry);
        continue;
      }
      const staged = kind.stage(Object.fromEntries(entry.cells), isKey);
      if (isProblems(staged)) for (const problem of staged) reject({ line: entry.line, ...problem });
      else {
        const sending = stageRow(`${entry.line}\t${staged.map(copyValue).join('\t')}\n`);
        if (sending) await sending;
      }
      if (++rows % 10_000 === 0) await onProgress(rows);
    }
    await flush();
    copy.stream.end();
    await copy.done;
  } catch (error) {
    // Ends the COPY with an error, so the connection is usable again (unless the database ended it already).
    await copy.abandon(error as Error);
    throw copy.failure() ?? error;
  }
  return { rows, early };
}
