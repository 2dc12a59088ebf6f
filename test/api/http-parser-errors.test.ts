import { expect } from 'chai';
import { connect } from 'node:net';
import { testApp } from '../setup/hooks.js';

const CORRELATION = /^SR-\d{13}-\d{4}$/;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` on a fresh TCP connection and reads until the server closes it (5 s at most). */
function exchange(request: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(testApp().server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    }, 5000);
    socket.on('data', chunk => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map(l => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
  });
}

function expectCentralBody(answer: RawAnswer, status: number, messageKey: string, path: string): void {
  expect(answer.status).to.equal(status);
  expect(answer.headers['content-type']).to.match(/^application\/json/);
  expect(Number(answer.headers['content-length'])).to.equal(Buffer.byteLength(answer.body));
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(body).to.include({ status, messageKey, path });
  expect(body.error).to.equal(status === 413 ? 'payload_too_large' : 'bad_request');
  expect(body.message).to.be.a('string').and.not.equal(messageKey);
  expect(body.correlationId).to.match(CORRELATION);
  expect(answer.headers['x-correlation-id']).to.equal(body.correlationId);
  expect(new Date(String(body.timestamp)).toISOString()).to.equal(body.timestamp);
}

describe("Node's HTTP parser errors answer in the central error body", () => {
  const cases: [string, string | Buffer, number, string][] = [
    [
      'a bare CR inside a header value',
      'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n',
      400,
      'error.http.malformed',
    ],
    [
      'a bare LF ending a header line',
      'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\nX-B: b\r\n\r\n',
      400,
      'error.http.malformed',
    ],
    [
      'a NUL inside a header value',
      'GET /api/items?x=1 HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n',
      400,
      'error.http.malformed',
    ],
    [
      'Content-Length together with Transfer-Encoding: chunked',
      'POST /api/suppliers HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'error.http.malformed',
    ],
    [
      'a malformed chunk size',
      'POST /api/suppliers HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      400,
      'error.http.malformed',
    ],
    ['a request line that is not HTTP', 'HELLO WORLD\r\n\r\n', 400, 'error.http.malformed'],
    [
      'headers larger than Node allows',
      `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20 * 1024)}\r\n\r\n`,
      431,
      'error.header.too.large',
    ],
  ];

  for (const [label, request, status, messageKey] of cases) {
    it(`When a request carries ${label}, then ${status} with the documented JSON body`, async () => {
      const path = /^[A-Z]+ (\/[^ ?]*)/.exec(request.toString())?.[1] ?? '';
      expectCentralBody(await exchange(request), status, messageKey, path);
    });
  }

  it('When a request names an unsupported expectation, then 417 with the documented JSON body', async () => {
    const answer = await exchange(
      'POST /api/suppliers HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
    expectCentralBody(answer, 417, 'error.expectation.failed', '/api/suppliers');
  });

  it('When a product-API request is broken, then the answer is the product error envelope', async () => {
    for (const request of [
      'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n',
      'GET /api/products/search?q=x HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n',
    ]) {
      const answer = await exchange(request);
      expect(answer.status).to.equal(400);
      const body = JSON.parse(answer.body) as Record<string, unknown>;
      expect(body).to.include({ success: false, data: null, status: 400, error: 'bad_request' });
      expect(body.message).to.equal('The request could not be read as HTTP');
      expect(body.correlationId).to.match(CORRELATION);
      expect(body.path).to.equal(/^[A-Z]+ ([^\s?]+)/.exec(request)![1]);
    }
  });

  it('When a broken request follows a good one on a keep-alive connection, then the good answer stays intact', async () => {
    const answer = await exchange(
      'GET /api/health HTTP/1.1\r\nHost: x\r\n\r\nGET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n',
    );
    expect(answer.status).to.equal(200);
    const length = Number(answer.headers['content-length']);
    expect(JSON.parse(answer.body.slice(0, length))).to.include({ status: 'ok' });
    // Whatever follows is either nothing (the response was under way) or a complete 400 answer.
    const rest = answer.body.slice(length);
    if (rest !== '') expect(rest).to.match(/^HTTP\/1\.1 400 [^]*"messageKey":"error\.http\.malformed"/);
  });
});
