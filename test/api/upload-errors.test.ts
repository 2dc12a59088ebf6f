import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newSupplier } from '../support/inventory.js';
import { freePort } from '../support/ports.js';
import { testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';
import { waitFor } from '../support/wait-for.js';

const BOUNDARY = 'XyZBoundary';
const CORRELATION = /^SR-\d{13}-\d{4}$/;

interface RawAnswer {
  status: number;
  body: string;
}

/** Sends `head` + `body` on a fresh connection; `abort` destroys the socket instead of waiting for an answer. */
function exchange(port: number, head: string, body: string, abort = false): Promise<RawAnswer | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 10 s'));
    }, 10000);
    socket.on('error', () => undefined);
    socket.on('data', chunk => chunks.push(chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      if (abort) return resolve(undefined);
      const text = Buffer.concat(chunks).toString('utf8');
      const [status, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(status.split(' ')[1]), body: rest.join('\r\n\r\n') });
    });
    socket.write(head + body, () => {
      if (abort) setTimeout(() => socket.destroy(), 50);
    });
  });
}

const request = (path: string, auth: string, contentLength: number, type: string) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\nConnection: close\r\n` +
  `Content-Type: ${type}\r\nContent-Length: ${contentLength}\r\n\r\n`;

/** Rows for the malformed cases (never imported). */
const ROWS = 'name,quantity,price\r\nx,1,1.00\r\n';

const part = (content: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n` +
  `Content-Type: text/csv\r\n\r\n${content}`;

describe('Malformed, truncated and aborted uploads (issue 27.1)', function () {
  this.timeout(120000);
  let web: ChildProcess & { output: () => string };
  let port: number;
  let admin: TestUser;
  let csv: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    const supplier = await newSupplier(api(), admin.auth);
    csv = `name,quantity,price,supplierName\r\nUpload ${Date.now()},1,1.00,${supplier.name}\r\nx,1,1.00\r\n`;
    port = await freePort();
    web = spawnStockroom(['--web'], testEnv({ PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/api/health`, 60000);
  });

  after(async () => {
    if (web.exitCode === null && web.signalCode === null) web.kill('SIGTERM');
    await waitForExit(web, 15000).catch(() => web.kill('SIGKILL'));
  });

  const alive = () => web.exitCode === null && web.signalCode === null;

  const multipartCases: [string, string][] = [
    ['a body that ends without its closing boundary', part(ROWS)],
    ['a part whose headers never end', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"`],
    ['a malformed part header', `--${BOUNDARY}\r\nthis is no header\r\n\r\n${ROWS}\r\n--${BOUNDARY}--\r\n`],
    ['a body without any boundary', ROWS],
  ];

  for (const [path, product] of [
    ['/api/inventory/import', false],
    ['/api/products/import', true],
  ] as const)
    for (const [label, body] of multipartCases)
      it(`When ${path} gets ${label}, then 400 in the documented shape and the process lives on`, async () => {
        const answer = await exchange(
          port,
          request(path, admin.auth, Buffer.byteLength(body), `multipart/form-data; boundary=${BOUNDARY}`),
          body,
        );
        expect(answer!.status, web.output().slice(-2000)).to.equal(400);
        const error = JSON.parse(answer!.body) as Record<string, unknown>;
        expect(error).to.include({ status: 400, path });
        expect(error.correlationId).to.match(CORRELATION);
        expect(error.message)
          .to.be.a('string')
          .and.not.match(/^csv\./);
        if (product) expect(error).to.include({ success: false, data: null });
        else expect(error.error).to.equal('bad_request');
        expect(alive()).to.equal(true);
      });

  it('When uploads are aborted mid-part and mid-body, then the process lives on and the next upload is imported', async () => {
    const multipart = part(csv);
    for (const [type, body] of [
      [`multipart/form-data; boundary=${BOUNDARY}`, multipart],
      ['text/csv', csv],
    ])
      await exchange(
        port,
        request('/api/inventory/import', admin.auth, body.length + 5000, type),
        body,
        true,
      );
    const base = `http://127.0.0.1:${port}`;
    // The aborted requests ended before the process's answer: it keeps serving.
    await waitFor(async () => (await fetch(`${base}/api/health`)).ok, 5000, 'health');
    expect(alive()).to.equal(true);

    const complete = `${multipart}\r\n--${BOUNDARY}--\r\n`;
    const res = await fetch(`${base}/api/inventory/import?dryRun=true`, {
      method: 'POST',
      headers: { Authorization: admin.auth, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: complete,
    });
    expect(res.status).to.equal(202);
    expect(((await res.json()) as { jobId: string }).jobId).to.be.a('string');
    expect(alive()).to.equal(true);
  });
});
