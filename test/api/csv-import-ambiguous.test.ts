import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newSupplier } from '../support/inventory.js';
import { testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit } from '../support/spawn-stockroom.js';
import { waitFor } from '../support/wait-for.js';
import { csvFile, drainStockEvents, runImport, type ImportStatusBody } from '../support/csv.js';

const uid = () => randomUUID().slice(0, 8);
const ITEMS = '/api/inventory/import';
const PRODUCTS = '/api/products/import';

const problems = (status: ImportStatusBody) =>
  status.report!.rejected.map(r => [r.line, r.column, r.messageKey] as const);

/**
 * Issue 27.6 and 27.8: malformed CSV and ambiguous files are rejected-row reports with line and column, never
 * a failed job, and nothing is applied. The imports run in a worker process of their own, so its log can be
 * searched for the cell values.
 */
describe('CSV imports of malformed and ambiguous files (issue 27.6, 27.8)', function () {
  this.timeout(120000);
  let admin: TestUser;
  let supplier: { id: string; name: string };
  let worker: ChildProcess & { output: () => string };
  /** Text that must never appear in the worker's log. */
  const secret = `Secret${uid()}`;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    supplier = await newSupplier(api(), admin.auth);
    const { services } = testApp();
    worker = spawnStockroom(
      ['--worker'],
      testEnv({ REDIS_PREFIX: services.config.redisPrefix, LOG_LEVEL: 'debug' }),
    );
    await waitFor(() => worker.output().includes('workers started'), 60000, 'the worker process');
  });
  after(async () => {
    await drainStockEvents(testApp().services);
    if (worker.exitCode === null) worker.kill('SIGTERM');
    await waitForExit(worker, 15000).catch(() => worker.kill('SIGKILL'));
  });

  const itemsNamed = async (name: string) =>
    (
      await api()
        .get(`/api/inventory/search?name=${encodeURIComponent(name)}&size=100`)
        .set('Authorization', admin.auth)
        .expect(200)
    ).body.content as { name: string; sku: string | null }[];

  it('When a cell holds a stray quote or a quote is never closed, then the import completes with a rejected row (line, column) and the log shows no cell value', async () => {
    const good = `Good ${uid()}`;
    const stray = `name,quantity,price,supplierName\r\n${good},1,1.00,${supplier.name}\r\n${good}x,2,1.00,${supplier.name}\r\nA${secret}"quoted,1,1.00,${supplier.name}\r\n`;
    const status = await runImport(api(), admin.auth, ITEMS, stray, 'dryRun=false', 'de');
    expect(status.state).to.equal('completed');
    expect(problems(status)).to.deep.equal([[4, 'name', 'csv.import.malformed']]);
    expect(status.report!.rejected[0].message).to.match(/^Die Datei ist ab dieser Zeile/);
    expect(status.report).to.deep.include({ applied: false, rejectedCount: 1 });
    expect(await itemsNamed(good)).to.have.length(0);

    const unclosed = `name,quantity,price\r\nP ${uid()},1,1.00\r\nQ ${uid()},1,"1.00\r\n`;
    const product = await runImport(api(), admin.auth, PRODUCTS, unclosed);
    expect(product.state).to.equal('completed');
    expect(problems(product)).to.deep.equal([[3, 'price', 'csv.import.malformed']]);
    expect(worker.output()).to.include('import');
    expect(worker.output()).not.to.include(secret);
  });

  it('When a column is named twice (quantity twice; name and NAME), then the header is rejected (line 1, that column) and nothing is applied', async () => {
    const name = `Twice ${uid()}`;
    const quantity = await runImport(
      api(),
      admin.auth,
      ITEMS,
      csvFile(
        ['name', 'quantity', 'price', 'supplierName', 'quantity'],
        [[name, 1, '1.00', supplier.name, 5]],
      ),
    );
    expect(problems(quantity)).to.deep.equal([[1, 'quantity', 'csv.import.column.duplicate']]);
    expect(quantity.report!.rejected[0].message).to.equal(
      'The header row names the column quantity more than once',
    );
    const names = await runImport(
      api(),
      admin.auth,
      PRODUCTS,
      csvFile(['name', 'quantity', 'price', 'NAME'], [[name, 1, '1.00', `${name} other`]]),
      'dryRun=false',
      'de',
    );
    expect(problems(names)).to.deep.equal([[1, 'name', 'csv.import.column.duplicate']]);
    expect(names.report!.rejected[0].message).to.equal('Die Kopfzeile nennt die Spalte name mehr als einmal');
    expect(await itemsNamed(name)).to.have.length(0);
  });

  it('When a row has more cells than the header, or two rows name the same item with different skus, then each is rejected with its line and column', async () => {
    const name = `Same ${uid()}`;
    const file = csvFile(
      ['name', 'sku', 'quantity', 'price', 'supplierName'],
      [
        [name, `A-${uid()}`, 1, '1.00', supplier.name],
        [name.toUpperCase(), `B-${uid()}`, 2, '1.00', supplier.name],
        [`Wide ${uid()}`, '', 1, '1.00', supplier.name, 'extra'],
      ],
    );
    const status = await runImport(api(), admin.auth, ITEMS, file);
    expect(problems(status)).to.deep.equal([
      [3, 'name', 'csv.import.row.duplicate'],
      [4, '#6', 'csv.import.row.too.many.cells'],
    ]);
    expect(status.report!.rejected[0].message).to.equal('This item already appears on line 2 of the file');
    expect(status.report!.rejected[1].message).to.equal(
      'This row has 6 cells, but the header row names only 5 columns',
    );
    expect(status.report?.applied).to.equal(false);
    expect(await itemsNamed(name)).to.have.length(0);
  });

  it('When the file ends with blank lines (empty, spaces, empty cells), then they are ignored and the file is applied', async () => {
    const name = `Trailing ${uid()}`;
    const file = `${csvFile(['name', 'quantity', 'price', 'supplierName'], [[name, 1, '1.00', supplier.name]])}\r\n   \r\n,,,\r\n`;
    const status = await runImport(api(), admin.auth, ITEMS, file);
    expect(status.report).to.deep.include({ created: 1, rejectedCount: 0, applied: true });
    expect(await itemsNamed(name)).to.have.length(1);
  });
});
