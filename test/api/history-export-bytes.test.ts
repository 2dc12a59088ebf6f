import { expect } from 'chai';
import pg from 'pg';
import request from 'supertest';
import { stringify } from 'csv-stringify/sync';
import { startTestApp, type TestApp, resetTestDatabase } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { createUser, type TestUser } from '../support/users.js';
import { csvWriterOptions } from '../../api/presenters/csv-response.js';
import { HISTORY_CSV_COLUMNS } from '../../domain/stock-history/history-csv.js';
import { historyExportQuery, type HistoryFilters } from '../../domain/stock-history/stock-history-queries.js';
import { toHistoryView, type StockHistoryView } from '../../domain/stock-history/stock-history.view.js';

/** A database of its own: the hostile entries have no items or events behind them (ledger checks). */
const DATABASE_URL = `${TEST_DATABASE_URL}_export_bytes`;
/** Enough rows that quoted cells with line breaks straddle the socket's and COPY's chunks. */
const ROWS = 4000;
const BATCH = 500;

/** Cells a CSV writer can get wrong: every quoting trigger, every formula prefix, apostrophes, unicode. */
const HOSTILE = [
  'plain',
  '',
  ' ',
  '  leading and trailing  ',
  'comma, inside',
  'semicolon; inside',
  'both,;mixed',
  'say "hi"',
  '"',
  '""',
  '"quoted whole"',
  'line\nbreak',
  'carriage\rreturn',
  'windows\r\nline',
  '\n',
  '\r\n',
  'trailing newline\n',
  '=SUM(A1:A2)',
  '+1',
  '-1',
  '@cmd',
  '\tTab first',
  '\rCR first',
  "'",
  "''",
  "'=already escaped",
  "'plain apostrophe",
  "it's",
  '=cmd|\' /C calc\'!A0, "x"\nnext',
  '\\.',
  '\\',
  'back\\slash',
  'NULL',
  '100% _real_',
  '\\N',
  'ünïcödé 日本語 😀',
  '\uFEFFbom first',
  '＝fullwidth equals',
  'line\u2028separator',
  'x'.repeat(200) + ',"\n' + 'y'.repeat(40),
];

/** Deterministic choice (the same rows on every run). */
const pick = <T>(values: T[], n: number, salt: number): T =>
  values[(n * 7919 + salt * 104729) % values.length];

const PRICES = ['0', '0.01', '0.10', '1.00', '12.30', '12.34', '100', '9999999999.99', '-5.50', '0.5'];
const REASONS = ['SALE', 'RESTOCK', 'DAMAGED', 'INITIAL_STOCK', '-ODD', '=ODD', "'ODD", 'A,B'];

/** The old export: the rows of the cursor read, mapped to views, through the CSV writer (the oracle). */
async function writerExport(app: TestApp, filters: HistoryFilters, delimiter: string): Promise<Buffer> {
  const query = historyExportQuery(filters);
  const rows = await app.services.orm.em.fork().execute<StockHistoryView[]>(query.sql, query.params);
  return Buffer.from(stringify(rows.map(toHistoryView), csvWriterOptions(HISTORY_CSV_COLUMNS, delimiter)));
}

async function copyExport(app: TestApp, user: TestUser, url: string): Promise<Buffer> {
  const res = await request(app.server.server)
    .get(url)
    .set('Authorization', user.auth)
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    })
    .expect(200);
  expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8');
  return res.body as Buffer;
}

/** Where two exports first differ, as readable text around it (the assertion prints it). */
function firstDifference(actual: Buffer, expected: Buffer): string {
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  const around = (b: Buffer) => JSON.stringify(b.subarray(Math.max(0, i - 80), i + 80).toString('utf8'));
  return `byte ${i} of ${actual.length} (expected ${expected.length}):\n  got      ${around(actual)}\n  expected ${around(expected)}`;
}

describe('History export written by COPY: byte for byte the CSV writer of the same rows', function () {
  this.timeout(120000);
  let app: TestApp;
  let user: TestUser;
  const supplierA = '6f1c2b3a-0000-4000-8000-00000000000a';
  const itemA = '6f1c2b3a-0000-4000-8000-0000000000a1';

  before(async () => {
    await resetTestDatabase(DATABASE_URL);
    // Not UTC by default: the export must not depend on the server's or the database's time zone.
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(
      `alter database "${new URL(DATABASE_URL).pathname.slice(1)}" set timezone = 'America/New_York'`,
    );
    await admin.end();
    app = await startTestApp({ DATABASE_URL });
    user = await createUser(app.services);
    const values: unknown[] = [];
    for (let n = 0; n < ROWS; n++) {
      const item = n % 5 === 0 ? itemA : `6f1c2b3a-0000-4000-8000-${String(n % 97).padStart(12, '0')}`;
      const supplier = n % 3 === 0 ? null : n % 3 === 1 ? supplierA : '6f1c2b3a-0000-4000-8000-00000000000b';
      const supplierName = supplier === null ? null : pick(HOSTILE, n, 2);
      const before = n % 50;
      const change = (n % 11) - 5;
      values.push(
        n + 1,
        item,
        `${pick(HOSTILE, n, 1)}${n % 4 === 0 ? ` #${n}` : ''}`.slice(0, 255),
        supplier,
        supplierName === null ? null : supplierName.slice(0, 255),
        change,
        before,
        Math.max(0, before + change),
        pick(REASONS, n, 3),
        pick(PRICES, n, 4),
        pick(HOSTILE, n, 5).slice(0, 320),
        // Milliseconds and microseconds, some entries in the same instant (ordered by id then).
        new Date(Date.UTC(2026, 0, 1) + Math.floor(n / 3) * 1234567 + (n % 7))
          .toISOString()
          .replace('Z', `${n % 10}Z`),
      );
    }
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      for (let start = 0; start < ROWS; start += BATCH) {
        const batch = values.slice(start * 12, (start + BATCH) * 12);
        const tuples = Array.from(
          { length: batch.length / 12 },
          (_, t) => `(${Array.from({ length: 12 }, (_, i) => `$${t * 12 + i + 1}`).join(', ')})`,
        );
        await client.query(
          `insert into stock_history (outbox_event_id, item_id, item_name, supplier_id, supplier_name, change,
                                      quantity_before, quantity_after, reason, price_at_change, created_by, "timestamp")
           values ${tuples.join(', ')}`,
          batch,
        );
      }
    } finally {
      await client.end();
    }
  });
  after(async () => app?.close());

  const filterCases: [string, Record<string, string>][] = [
    ['everything', {}],
    ['one supplier', { supplierId: supplierA }],
    ['one item', { itemId: itemA }],
    ['item name with a quote', { itemName: 'say "hi"' }],
    ['item name with wildcards', { itemName: '% _' }],
    ['item name with a line break', { itemName: 'line\nbreak' }],
    ['reason', { reason: 'DAMAGED' }],
    ['author with an apostrophe', { createdBy: "it's" }],
    ['author with delimiters', { createdBy: 'both,;mixed' }],
    ['a date range', { startDate: '2026-01-10T00:00:00.000Z', endDate: '2026-01-20T12:00:00.000Z' }],
    [
      'every filter',
      {
        startDate: '2026-01-01T00:00:00.000Z',
        endDate: '2026-03-01T00:00:00.000Z',
        itemName: '"" #1',
        supplierId: supplierA,
        itemId: itemA,
        reason: 'INITIAL_STOCK',
      },
    ],
    ['nothing matches (not a uuid)', { supplierId: 'not-a-uuid' }],
    ['nothing matches (no such author)', { createdBy: 'nobody' }],
  ];

  for (const delimiter of [',', ';'])
    for (const [name, filters] of filterCases)
      it(`When the history is exported (${name}, delimiter ${delimiter}), then every byte equals the writer's`, async () => {
        const params = new URLSearchParams({ ...filters, delimiter });
        const actual = await copyExport(app, user, `/api/stock-history/export.csv?${params.toString()}`);
        const oracleFilters: HistoryFilters = {
          ...filters,
          startDate: filters.startDate ? new Date(filters.startDate) : undefined,
          endDate: filters.endDate ? new Date(filters.endDate) : undefined,
        };
        const expected = await writerExport(app, oracleFilters, delimiter);
        if (name === 'everything') expect(expected.length).to.be.above(300_000);
        if (name.startsWith('nothing')) expect(expected.toString('utf8').split('\r\n')).to.have.length(2);
        else expect(expected.toString('utf8').split('\r\n').length).to.be.above(2);
        expect(
          actual.equals(expected),
          actual.equals(expected) ? '' : firstDifference(actual, expected),
        ).to.equal(true);
      });
});
