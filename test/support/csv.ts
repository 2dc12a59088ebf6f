import { OUTBOX_CONSUMERS } from '../../domain/outbox/consumers.js';
import { parse } from 'csv-parse/sync';
import type { Response } from 'supertest';
import type { Services } from '../../config/services.js';
import type { ApiClient } from './test-app.js';
import { waitFor } from './wait-for.js';
import { pendingForSql } from '../../domain/outbox/pending-events.js';

export interface ImportStatusBody {
  jobId: string;
  state: string;
  dryRun: boolean;
  progress: { rowsRead: number; rowsTotal: number | null };
  report: {
    created: number;
    updated: number;
    unchanged: number;
    rejectedCount: number;
    rejected: { line: number; column: string | null; message: string; messageKey: string }[];
    applied: boolean;
  } | null;
}

/** Collects a text body as a string (supertest leaves text/csv unparsed in `text`). */
export const csvText = (res: Response): string => res.text;

/** Parses a CSV download (BOM dropped) into header-keyed records. */
export function parseCsv(text: string, delimiter = ','): Record<string, string>[] {
  return parse<Record<string, string>>(text, { bom: true, columns: true, delimiter });
}

/** A CSV file from a header and rows, fields quoted as RFC 4180 asks. */
export function csvFile(header: string[], rows: (string | number)[][], delimiter = ','): string {
  const cell = (value: string | number) => {
    const text = String(value);
    return /[",;\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [header, ...rows].map(r => r.map(cell).join(delimiter)).join('\r\n') + '\r\n';
}

/** Posts a CSV body to an import route and answers the job id (202). */
export async function startImport(
  client: ApiClient,
  auth: string,
  url: string,
  content: string | Buffer,
  language = 'en',
): Promise<string> {
  const res = await client
    .post(url)
    .set('Authorization', auth)
    .set('Accept-Language', language)
    .set('Content-Type', 'text/csv')
    .send(Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'))
    .expect(202);
  return res.body.jobId as string;
}

/** Polls the job until it is completed or failed. */
export async function finishedImport(
  client: ApiClient,
  auth: string,
  statusUrl: string,
  timeoutMs = 30000,
): Promise<ImportStatusBody> {
  const status = await waitFor(
    async () => {
      const res = await client.get(statusUrl).set('Authorization', auth).expect(200);
      const body = res.body as ImportStatusBody;
      return body.state === 'completed' || body.state === 'failed' ? body : undefined;
    },
    timeoutMs,
    `import ${statusUrl}`,
  );
  return status!;
}

/** Import + wait: the final status of the import of `content`. */
export async function runImport(
  client: ApiClient,
  auth: string,
  base: '/api/inventory/import' | '/api/products/import',
  content: string | Buffer,
  query = 'dryRun=false',
  language = 'en',
): Promise<ImportStatusBody> {
  const jobId = await startImport(client, auth, `${base}?${query}`, content, language);
  return finishedImport(client, auth, `${base}/${jobId}`);
}

/**
 * Waits until every consumer has recorded every stock event, so a suite that imported many rows hands the
 * next suite idle queues (a backlog of folds would slow the next suite's own history waits).
 */
export async function drainStockEvents(services: Services, timeoutMs = 60000): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await services.orm.em
        .fork()
        .execute<{ n: string }[]>(
          `select count(*) as n from outbox_event o where type = 'stock.changed' and ${pendingForSql(OUTBOX_CONSUMERS, 'o')}`,
        );
      return Number(row.n) === 0;
    },
    timeoutMs,
    'every stock event recorded by every consumer',
  );
}
