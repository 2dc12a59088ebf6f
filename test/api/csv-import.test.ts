import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { waitForHistorySettled } from '../support/settle.js';
import { assertChain } from '../support/history.js';
import { csvFile, finishedImport, runImport, startImport, drainStockEvents } from '../support/csv.js';
import { startWorkers, type RunningWorkers } from '../../workers/main.js';

const HEADER = ['name', 'sku', 'quantity', 'price', 'supplierName', 'minimumQuantity'];
const uid = () => randomUUID().slice(0, 8);

describe('CSV import of inventory items (POST /api/inventory/import, a BullMQ job)', function () {
  this.timeout(60000);
  let admin: TestUser;
  let user: TestUser;
  let supplier: { id: string; name: string };
  let workers: RunningWorkers;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    supplier = await newSupplier(api(), admin.auth);
    workers = startWorkers(testApp().services, { clock: false });
  });
  after(async () => {
    await drainStockEvents(testApp().services);
    await workers.close();
  });

  const historyOf = async (itemId: string) => {
    await waitForHistorySettled(testApp().services);
    const res = await api()
      .get(`/api/stock-history/item/${itemId}`)
      .set('Authorization', user.auth)
      .expect(200);
    return res.body as {
      reason: string;
      change: number;
      quantityBefore: number;
      quantityAfter: number;
      priceAtChange: number;
    }[];
  };
  const item = async (id: string) =>
    (await api().get(`/api/inventory/${id}`).set('Authorization', user.auth).expect(200)).body;
  const itemsNamed = async (name: string) =>
    (
      await api()
        .get(`/api/inventory/search?name=${encodeURIComponent(name)}&size=100`)
        .set('Authorization', user.auth)
        .expect(200)
    ).body.content as { id: string; name: string; quantity: number; price: number; sku: string | null }[];

  it('When an export is imported back (comma and semicolon files), then nothing changes and no history is written', async () => {
    const own = await newSupplier(api(), admin.auth);
    const names = [
      `=1+2 formula ${uid()}`,
      `Quote "q", comma ${uid()}`,
      `Line\nbreak ${uid()}`,
      `Plain ${uid()}`,
    ];
    const items = [];
    for (const [i, name] of names.entries())
      items.push(
        await newItem(api(), admin.auth, own.id, {
          name,
          sku: i === 3 ? `SKU-${uid()}` : undefined,
          minimumQuantity: i,
        }),
      );
    // One after the other: unpaged history reads are streams, at most STREAMS_PER_USER at once per user.
    const before = [];
    for (const i of items) before.push(await historyOf(i.id));
    for (const delimiter of [',', ';']) {
      const exported = await api()
        .get(`/api/inventory/export.csv?supplierId=${own.id}&delimiter=${encodeURIComponent(delimiter)}`)
        .set('Authorization', admin.auth)
        .expect(200);
      const status = await runImport(api(), admin.auth, '/api/inventory/import', exported.text);
      expect(status.state).to.equal('completed');
      expect(status.report).to.deep.include({
        created: 0,
        updated: 0,
        unchanged: 4,
        rejectedCount: 0,
        applied: true,
      });
    }
    for (const [n, i] of items.entries()) {
      expect(await historyOf(i.id)).to.have.length(before[n].length);
      expect((await item(i.id)).version).to.equal(i.version);
    }
  });

  it('When a count, a price and new items are imported, then the dry run reports without writing and the real run writes INVENTORY_COUNT, PRICE_CHANGE and INITIAL_STOCK', async () => {
    const counted = await newItem(api(), admin.auth, supplier.id, {
      quantity: 10,
      price: 2.5,
      sku: `C-${uid()}`,
    });
    const newName = `New ${uid()}`;
    const newSupplierName = `Fresh supplier ${uid()}`;
    const file = csvFile(HEADER, [
      [counted.name.toUpperCase(), '', 7, '3.10', supplier.name, 0],
      [newName, '', 5, '1.99', newSupplierName, 2],
    ]);
    const dry = await runImport(
      api(),
      admin.auth,
      '/api/inventory/import',
      file,
      'dryRun=true&createSuppliers=true',
    );
    expect(dry.dryRun).to.equal(true);
    expect(dry.report).to.deep.include({
      created: 1,
      updated: 1,
      unchanged: 0,
      rejectedCount: 0,
      applied: false,
    });
    expect((await item(counted.id)).quantity).to.equal(10);
    expect(await itemsNamed(newName)).to.have.length(0);

    const real = await runImport(
      api(),
      admin.auth,
      '/api/inventory/import',
      file,
      'dryRun=false&createSuppliers=true',
    );
    expect({ ...real.report, applied: undefined }).to.deep.equal({ ...dry.report, applied: undefined });
    expect(real.report?.applied).to.equal(true);
    const after = await item(counted.id);
    expect(after).to.deep.include({ quantity: 7, price: 3.1 });
    const history = await historyOf(counted.id);
    expect(history.map(h => h.reason)).to.deep.equal(['INVENTORY_COUNT', 'PRICE_CHANGE', 'INITIAL_STOCK']);
    expect(history[0]).to.deep.include({
      change: -3,
      quantityBefore: 10,
      quantityAfter: 7,
      priceAtChange: 3.1,
    });
    const [created] = await itemsNamed(newName);
    expect(created).to.deep.include({ quantity: 5, price: 1.99 });
    expect((await item(created.id)).supplierName).to.equal(newSupplierName);
    expect((await historyOf(created.id)).map(h => h.reason)).to.deep.equal(['INITIAL_STOCK']);
  });

  it('When new items are imported, then their ids are version 7 UUIDs of the import time, in the order of their names', async () => {
    const tag = uid();
    const names = ['Walnut', 'apple', 'Mango', 'banana'].map(n => `${n} ${tag}`);
    const file = csvFile(
      HEADER,
      names.map(name => [name, '', 1, '1.00', supplier.name, 0]),
    );
    const before = Date.now();
    const done = await runImport(api(), admin.auth, '/api/inventory/import', file, 'dryRun=false');
    expect(done.report).to.deep.include({ created: 4, applied: true });
    const created = await itemsNamed(tag);
    expect(created).to.have.length(4);
    for (const { id } of created) {
      expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = parseInt(id.replaceAll('-', '').slice(0, 12), 16);
      expect(ms).to.be.within(before - 1000, Date.now());
    }
    const byId = [...created].sort((a, b) => (a.id < b.id ? -1 : 1)).map(i => i.name);
    expect(byId).to.deep.equal([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
  });

  it('When 10 rows are bad in 10 different ways, then each is reported with its line and column in the request language, and nothing is applied', async () => {
    const a = await newItem(api(), admin.auth, supplier.id, { sku: `A-${uid()}` });
    const b = await newItem(api(), admin.auth, supplier.id, { sku: `B-${uid()}` });
    const good = `Good ${uid()}`;
    const s = supplier.name;
    const file = csvFile(HEADER, [
      [good, '', 1, '1.00', s, 0], // line 2: fine, but must not be applied
      ['', '', 1, '1.00', s, 0], // 3 name missing
      ['x'.repeat(256), '', 1, '1.00', s, 0], // 4 name too long
      [`Neg ${uid()}`, '', -1, '1.00', s, 0], // 5 quantity < 0
      [`Big ${uid()}`, '', 1000000, '1.00', s, 0], // 6 quantity > 999999
      [`Zero ${uid()}`, '', 1, '0', s, 0], // 7 price < 0.01
      [`Cents ${uid()}`, '', 1, '1.001', s, 0], // 8 three decimals
      [`Nosup ${uid()}`, '', 1, '1.00', `Unknown ${uid()}`, 0], // 9 unknown supplier
      [good, '', 2, '1.00', s, 0], // 10 the same item twice in the file
      [a.name, String((b as { sku?: string }).sku), 1, '1.00', s, 0], // 11 b renamed to a's name: duplicate name
      [`Min ${uid()}`, '', 1, '1.00', s, -5], // 12 minimum < 0
    ]);
    const status = await runImport(api(), admin.auth, '/api/inventory/import', file, 'dryRun=false', 'de');
    const rejected = status.report!.rejected.map(r => [r.line, r.column, r.messageKey]);
    expect(rejected).to.deep.equal([
      [3, 'name', 'inventory.item.name.required'],
      [4, 'name', 'inventory.item.name.too.long'],
      [5, 'quantity', 'inventory.item.quantity.min'],
      [6, 'quantity', 'inventory.item.quantity.max'],
      [7, 'price', 'inventory.item.price.min'],
      [8, 'price', 'inventory.item.price.precision'],
      [9, 'supplierName', 'error.not.found.supplier'],
      [10, 'name', 'csv.import.row.duplicate'],
      [11, 'name', 'error.duplicate.resource'],
      [12, 'minimumQuantity', 'inventory.item.minimum.min'],
    ]);
    expect(status.report!.rejected[0].message).to.equal('Artikelname ist erforderlich');
    expect(status.report).to.deep.include({ rejectedCount: 10, applied: false, created: 1 });
    expect(await itemsNamed(good)).to.have.length(0);
    expect((await item(b.id)).name).to.equal(b.name);
  });

  it('When the file has a BOM, semicolons, quoted separators, embedded newlines and formula cells, then every cell arrives as written', async () => {
    const multi = `Two;\nlines "quoted" ${uid()}`;
    const formula = `=HYPERLINK("x") ${uid()}`;
    const plus = `+49 ${uid()}`;
    const body =
      '\uFEFF' +
      csvFile(
        ['Name', 'QUANTITY', 'price', 'SupplierName', 'ignored'],
        [
          [multi, 3, '1.50', supplier.name, 'whatever'],
          [`'${formula}`, 4, '2.00', supplier.name, ''],
          [plus, 5, '2.50', supplier.name, ''],
          [`Bad ${uid()}`, 'x', '2.50', supplier.name, ''],
        ],
        ';',
      );
    const dry = await runImport(api(), admin.auth, '/api/inventory/import', body, 'dryRun=true');
    // the multi-line record takes lines 2-3, so the bad row is on line 6
    expect(dry.report!.rejected.map(r => [r.line, r.column])).to.deep.equal([[6, 'quantity']]);
    const fixed = body.replace(/Bad [^;]*;x;/, `Fine ${uid()};6;`);
    const status = await runImport(api(), admin.auth, '/api/inventory/import', fixed);
    expect(status.report).to.deep.include({ created: 4, rejectedCount: 0, applied: true });
    expect((await itemsNamed(multi.slice(5)))[0].name).to.equal(multi);
    expect((await itemsNamed(formula))[0].name).to.equal(formula);
    expect((await itemsNamed(plus))[0].name).to.equal(plus);
  });

  it('When stock is adjusted through the API while an import counts the same item, then no update is lost', async () => {
    const own = await newSupplier(api(), admin.auth);
    const hot = await newItem(api(), admin.auth, own.id, { quantity: 100 });
    const rows: (string | number)[][] = [[hot.name, '', 50, '2.50', own.name, 0]];
    for (let i = 0; i < 300; i++) rows.push([`Filler ${uid()}`, '', 1, '1.00', own.name, 0]);
    const jobId = await startImport(
      api(),
      admin.auth,
      '/api/inventory/import?dryRun=false',
      csvFile(HEADER, rows),
    );
    // An adjust waits at most LOCK_TIMEOUT_MS for the import's lock on the item: 200, or 503 with Retry-After.
    const statuses = await inLanes(20, 4, async () => {
      const res = await api()
        .patch(`/api/inventory/${hot.id}/quantity?delta=1&reason=RESTOCK`)
        .set('Authorization', user.auth);
      if (res.status === 503) expect(res.headers['retry-after']).to.be.a('string');
      return res.status;
    });
    expect(statuses.every(s => s === 200 || s === 503)).to.equal(true);
    const applied = statuses.filter(s => s === 200).length;
    const status = await finishedImport(api(), admin.auth, `/api/inventory/import/${jobId}`);
    expect(status.report?.applied).to.equal(true);
    await waitForHistorySettled(testApp().services);
    const chain = await assertChain(testApp().services, hot.id);
    const final = (await item(hot.id)).quantity;
    expect(chain.at(-1)!.quantity_after).to.equal(final);
    expect(chain.filter(r => r.change === 1)).to.have.length(applied);
    expect(chain.reduce((sum, r) => sum + r.change, 0)).to.equal(final);
  });

  it('When the same file is posted twice by the same admin while the first is in flight, then both get the same job', async () => {
    const rows = Array.from({ length: 200 }, () => [`Twice ${uid()}`, '', 1, '1.00', supplier.name, 0]);
    const file = csvFile(HEADER, rows);
    const [first, second] = await Promise.all([
      startImport(api(), admin.auth, '/api/inventory/import?dryRun=true', file),
      startImport(api(), admin.auth, '/api/inventory/import?dryRun=true', file),
    ]);
    expect(second).to.equal(first);
    await finishedImport(api(), admin.auth, `/api/inventory/import/${first}`);
  });

  // Uploads beyond IMPORT_MAX_BYTES (413): import-upload-limit.test.ts.
  it('When a USER, an anonymous caller or a bad request imports, then 403, 401, 415 or 404 and nothing is stored', async () => {
    const file = csvFile(HEADER, [[`No ${uid()}`, '', 1, '1.00', supplier.name, 0]]);
    await api()
      .post('/api/inventory/import')
      .set('Authorization', user.auth)
      .set('Content-Type', 'text/csv')
      .send(file)
      .expect(403);
    await api().post('/api/inventory/import').set('Content-Type', 'text/csv').send(file).expect(401);
    await api().post('/api/inventory/import').set('Authorization', admin.auth).send({ file }).expect(415);
    await api().get('/api/inventory/import/import-999999999').set('Authorization', admin.auth).expect(404);
    await api().get('/api/inventory/import/nonsense').set('Authorization', admin.auth).expect(404);
  });

  it('When imports are requested, then their job ids are unguessable: neither the row id nor a padded form of it resolves (issue 27.10)', async () => {
    const file = (n: number) => csvFile(HEADER, [[`Id ${n} ${uid()}`, '', 1, '1.00', supplier.name, 0]]);
    const ids = [
      await startImport(api(), admin.auth, '/api/inventory/import?dryRun=true', file(1)),
      await startImport(api(), admin.auth, '/api/inventory/import?dryRun=true', file(2)),
    ];
    for (const id of ids) expect(id).to.match(/^import-[A-Za-z0-9_-]{24}$/);
    expect(ids[0]).not.to.equal(ids[1]);
    const [row] = await testApp()
      .services.orm.em.fork()
      .execute<{ id: string }[]>('select id::text as id from csv_import where public_id = ?', [ids[1]]);
    for (const guess of [`import-${row.id}`, `import-0${row.id}`, row.id])
      await api().get(`/api/inventory/import/${guess}`).set('Authorization', admin.auth).expect(404);
    for (const id of ids) await finishedImport(api(), admin.auth, `/api/inventory/import/${id}`);
  });

  it('When the file comes as a multipart form, then it is imported like a body', async () => {
    const name = `Form ${uid()}`;
    const res = await api()
      .post('/api/inventory/import?dryRun=false')
      .set('Authorization', admin.auth)
      .attach('file', Buffer.from(csvFile(HEADER, [[name, '', 2, '1.00', supplier.name, 0]])), 'items.csv')
      .expect(202);
    const status = await finishedImport(api(), admin.auth, `/api/inventory/import/${res.body.jobId}`);
    expect(status.report).to.deep.include({ created: 1, applied: true });
    expect(await itemsNamed(name)).to.have.length(1);
  });
});
