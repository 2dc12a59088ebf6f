import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { i18n } from 'i18next';
import { newCorrelationId } from './middleware/correlation-id.js';
import { PRODUCT_PATHS } from './middleware/error-handler.js';

interface ParserError extends Error {
  code?: string;
  rawPacket?: Buffer;
}

/** Node's HTTP parser failures -> status and message key (anything unknown is a malformed request). */
function classify(code: string | undefined): { status: number; reason: string; messageKey: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', messageKey: 'error.header.too.large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', messageKey: 'error.payload.too.large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', messageKey: 'error.request.timeout' };
    default:
      return { status: 400, reason: 'Bad Request', messageKey: 'error.http.malformed' };
  }
}

const CODES: Record<number, string> = { 413: 'payload_too_large' };

/** The request path from the raw request line (printable ASCII up to `?` or a blank); '' when unreadable. */
function pathOf(raw: Buffer | undefined): string {
  const line = raw?.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0] ?? '';
  const match = /^[A-Z]{1,16} (\/[\x21-\x3e\x40-\x7e]*)/.exec(line);
  return match ? match[1].slice(0, 200) : '';
}

/** A complete HTTP/1.1 response carrying an error body; the connection closes after it. */
function rawResponse(status: number, reason: string, body: Record<string, unknown>): string {
  const json = JSON.stringify(body);
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    `X-Correlation-Id: ${String(body.correlationId)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    json,
  ].join('\r\n');
}

/** The error body of the path's route family: the product envelope under the product paths, else central. */
function errorBodyFor(i18n: i18n, status: number, messageKey: string, path: string): Record<string, unknown> {
  const common = {
    error: CODES[status] ?? 'bad_request',
    message: i18n.t(messageKey, { lng: 'en' }),
    status,
    timestamp: new Date().toISOString(),
    path,
    correlationId: newCorrelationId(),
  };
  return PRODUCT_PATHS.test(path) ? { success: false, data: null, ...common } : { ...common, messageKey };
}

/**
 * Requests Node refuses before Express sees them (bare CR/LF or NUL in a header, bad framing, headers too
 * large, an unsupported `Expect`) are answered in the documented error body of their path (central, or the
 * product envelope) instead of Node's empty one, in English (no language is known yet), whenever the socket can still take a response: not when the
 * peer is gone or when a response on this connection has already started.
 */
export function answerParserErrors(server: Server, i18n: i18n): void {
  server.on('clientError', (error: ParserError, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, reason, messageKey } = classify(error.code);
    const body = errorBodyFor(i18n, status, messageKey, pathOf(error.rawPacket));
    socket.end(rawResponse(status, reason, body));
    setTimeout(() => socket.destroy(), 2000).unref();
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = errorBodyFor(
      i18n,
      417,
      'error.expectation.failed',
      (req.url ?? '').split('?')[0].slice(0, 200),
    );
    const json = JSON.stringify(body);
    res.writeHead(417, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(json),
      'X-Correlation-Id': String(body.correlationId),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      Connection: 'close',
    });
    res.end(json);
  });
}
