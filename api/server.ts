import { createServer, type Server } from 'node:http';
import type { Services } from '../config/services.js';
import { createApp } from './app.js';
import { answerParserErrors } from './parser-errors.js';

/**
 * How long a stopping server lets accepted requests and open streams finish. A platform kills a process 30 s
 * after SIGTERM; what is still open then is cut (sockets destroyed, so a client sees a truncated transfer, never
 * a short but clean one) with time left to close the pools.
 */
export const DRAIN_DEADLINE_MS = 20000;

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting connections and waits for in-flight requests and streams, at most `deadlineMs`. */
  stop(deadlineMs?: number): Promise<void>;
}

/** Starts the HTTP server for an already opened set of services. */
export async function startServer(services: Services, port = services.config.port): Promise<RunningServer> {
  const { app } = createApp(services);
  const server = createServer(app);
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10000;
  server.requestTimeout = 60000;
  answerParserErrors(server, services.i18n);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, resolve);
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    server,
    port: actualPort,
    stop: (deadlineMs = DRAIN_DEADLINE_MS) =>
      new Promise<void>(resolve => {
        // Responses finishing from now on close their connection, and idle keep-alive sockets are closed as
        // soon as they become idle, so in-flight requests complete and nothing waits for keep-alive timeouts.
        server.prependListener('request', (_req, res: { setHeader(name: string, value: string): void }) =>
          res.setHeader('Connection', 'close'),
        );
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const force = setTimeout(() => server.closeAllConnections(), deadlineMs);
        force.unref();
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
