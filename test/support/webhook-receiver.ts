import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver: answers 500 to the first `failures` requests (or hangs while `hang` is set). */
export async function startReceiver(failures: number) {
  const received: Received[] = [];
  const state = { failures, hang: false };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', chunk => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      if (state.hang) return;
      if (state.failures > 0) {
        state.failures -= 1;
        res.writeHead(500).end('try again');
      } else res.writeHead(204).end();
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hooks/low-stock`,
    received,
    state,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
