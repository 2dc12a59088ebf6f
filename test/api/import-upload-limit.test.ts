import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { freePort } from '../support/ports.js';
import { testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';

/** The limit the web process is started with (a smaller one than the default, so the files stay small). */
/** 2.5 MB: the file at the limit is stored in three parts, the last one partly filled. */
const LIMIT = 2.5 * 1024 * 1024;
const BOUNDARY = 'LimitBoundary';

/**
 * A CSV file of exactly `bytes` bytes (a header, then rows of a made-up item), made as it is sent: never held
 * whole. `hash` gets every byte, so what was stored can be compared with what was sent.
 */
async function* csvOfSize(bytes: number, hash = createHash('sha256')): AsyncGenerator<Buffer> {
  let sent = 0;
  let block = 0;
  const header = Buffer.from('name,quantity,price\n');
  for (let chunk = header; sent < bytes; chunk = rowsBlock(block++)) {
    const part = chunk.subarray(0, bytes - sent);
    sent += part.length;
    hash.update(part);
    yield part;
  }
}

const rowsBlock = (block: number) =>
  Buffer.from(Array.from({ length: 500 }, (_, i) => `Limit ${block}-${i},1,1.00\n`).join(''));

async function* multipart(content: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="items.csv"\r\n` +
      'Content-Type: text/csv\r\n\r\n',
  );
  yield* content;
  yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
}

describe('Import uploads up to IMPORT_MAX_BYTES, streamed to storage (issue 43.4)', function () {
  this.timeout(180000);
  let web: ChildProcess & { output: () => string };
  let base: string;
  let admin: TestUser;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    const port = await freePort();
    web = spawnStockroom(['--web'], testEnv({ PORT: String(port), IMPORT_MAX_BYTES: String(LIMIT) }));
    base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/api/health`, 60000);
  });

  after(async () => {
    if (web.exitCode === null && web.signalCode === null) web.kill('SIGTERM');
    await waitForExit(web, 15000).catch(() => web.kill('SIGKILL'));
  });

  /** Posts a streamed body (chunked: no Content-Length, so the limit is found while reading). */
  const post = (body: AsyncIterable<Buffer>, type = 'text/csv', language = 'en') =>
    fetch(`${base}/api/inventory/import?dryRun=true`, {
      method: 'POST',
      headers: { Authorization: admin.auth, 'Content-Type': type, 'Accept-Language': language },
      body: Readable.toWeb(Readable.from(body)),
      duplex: 'half',
    });

  /** The admin's imports and the parts stored for them. */
  const stored = async () => {
    const [row] = await testApp()
      .services.orm.em.fork()
      .execute<{ imports: string; parts: string }[]>(
        `select (select count(*) from csv_import where user_id = ?) as imports,
                (select count(*) from csv_import_part p join csv_import i on i.id = p.import_id
                  where i.user_id = ?) as parts,
                (select count(*) from csv_import_part p
                  where not exists (select 1 from csv_import i where i.id = p.import_id)) as orphans`,
        [admin.id, admin.id],
      );
    return row;
  };

  const multipartType = `multipart/form-data; boundary=${BOUNDARY}`;

  for (const [label, type, wrap] of [
    ['a CSV body', 'text/csv', (c: AsyncIterable<Buffer>) => c],
    ['the file part of a form', multipartType, multipart],
  ] as const)
    it(`When ${label} one byte over the limit is uploaded, then 413 in the contract's shape (en and de) and nothing is stored`, async () => {
      const before = await stored();
      for (const [language, message] of [
        ['en', 'The file is larger than 2.5 MB'],
        ['de', 'Die Datei ist größer als 2.5 MB'],
      ]) {
        const res = await post(wrap(csvOfSize(LIMIT + 1)), type, language);
        expect(res.status, web.output().slice(-2000)).to.equal(413);
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).to.include({
          error: 'payload_too_large',
          status: 413,
          path: '/api/inventory/import',
          messageKey: 'csv.import.too.large',
          message,
        });
        expect(body.correlationId).to.be.a('string');
      }
      expect(await stored()).to.deep.equal(before);
    });

  for (const [label, type, wrap] of [
    ['a CSV body', 'text/csv', (c: AsyncIterable<Buffer>) => c],
    ['the file part of a form', multipartType, multipart],
  ] as const)
    it(`When ${label} of exactly the limit is uploaded, then 202 and the file is stored byte for byte`, async () => {
      const hash = createHash('sha256');
      const res = await post(wrap(csvOfSize(LIMIT, hash)), type);
      expect(res.status, web.output().slice(-2000)).to.equal(202);
      const { jobId } = (await res.json()) as { jobId: string };
      const [row] = await testApp()
        .services.orm.em.fork()
        .execute<{ size: string; file_hash: string; bytes: string; parts: string }[]>(
          `select i.size, i.file_hash, sum(octet_length(p.bytes)) as bytes, count(p.*) as parts
             from csv_import i join csv_import_part p on p.import_id = i.id
            where i.public_id = ? group by i.id`,
          [jobId],
        );
      const digest = hash.digest('hex');
      expect(row).to.deep.equal({ size: String(LIMIT), file_hash: digest, bytes: String(LIMIT), parts: '3' });
      const [content] = await testApp()
        .services.orm.em.fork()
        .execute<{ digest: string }[]>(
          `select encode(sha256(string_agg(p.bytes, ''::bytea order by p.seq)), 'hex') as digest
             from csv_import i join csv_import_part p on p.import_id = i.id where i.public_id = ?`,
          [jobId],
        );
      expect(content.digest).to.equal(digest);
      await fetch(`${base}/api/inventory/import/${jobId}`, {
        method: 'DELETE',
        headers: { Authorization: admin.auth },
      });
    });

  it('When three uploads stall halfway, then the web process holds no transaction open for them, other requests are answered, and nothing is stored', async () => {
    const before = await stored();
    const stalls = Array.from({ length: 3 }, () => new AbortController());
    const pending = stalls.map(controller => {
      async function* halfThenStall(): AsyncGenerator<Buffer> {
        yield* csvOfSize(LIMIT / 2);
        await new Promise<void>(resolve => controller.signal.addEventListener('abort', () => resolve()));
      }
      return fetch(`${base}/api/inventory/import?dryRun=true`, {
        method: 'POST',
        headers: { Authorization: admin.auth, 'Content-Type': 'text/csv' },
        body: Readable.toWeb(Readable.from(halfThenStall())),
        duplex: 'half',
        signal: controller.signal,
      }).catch(() => undefined);
    });
    const waitingInTransaction = async () => {
      const rows = await testApp()
        .services.orm.em.fork()
        .execute<{ pid: number }[]>(
          `select pid from pg_stat_activity
            where datname = current_database() and state = 'idle in transaction'
              and state_change < now() - interval '1 second'`,
        );
      return rows.length;
    };
    try {
      const seen: number[] = [];
      const watchUntil = Date.now() + 3000;
      while (Date.now() < watchUntil) {
        seen.push(await waitingInTransaction());
        await new Promise(resolve => setTimeout(resolve, 200));
      }
      expect(Math.max(...seen), 'connections idle in a transaction while uploads stall').to.equal(0);
      const res = await fetch(`${base}/api/suppliers`, { headers: { Authorization: admin.auth } });
      expect(res.status).to.equal(200);
    } finally {
      for (const controller of stalls) controller.abort();
      await Promise.all(pending);
    }
    expect(await stored()).to.deep.equal(before);
  });
});
