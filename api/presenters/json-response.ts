import type { Express, Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';
/** Statuses whose answer has no body: Express strips it (and its headers) for them. */
const BODYLESS = new Set([204, 205, 304]);

/**
 * `res.json(value)` for the app's answers, without Express's generic `res.send` on the way: that one looks the
 * type up again (mime-types), parses and formats it to set the charset, and checks freshness for every answer
 * (a visible share of a read's CPU, docs/performance.md). The answer is the same: `application/json; charset=utf-8`, Content-Length, the
 * JSON text. Whatever this path does not cover goes to Express's own `res.json`: a Content-Type already chosen,
 * a status without a body, HEAD, a conditional request (If-None-Match / If-Modified-Since: 304 answers), a
 * value with no JSON text.
 */
export function installJsonResponse(app: Express): void {
  const expressJson = app.response.json;
  app.response.json = function json(this: Response, value: unknown): Response {
    const body = JSON.stringify(value) as string | undefined;
    if (body === undefined || !plainAnswer(this)) return expressJson.call(this, value);
    sendText(this, body);
    return this;
  };
}

/**
 * A JSON text already made (a write's reply, also stored for Idempotency-Key replays) sent as `res.json` sends
 * a value: the same answer as Express's `res.type('application/json').send(text)`, which covers what this
 * path does not.
 */
export function sendJsonText(res: Response, text: string): void {
  if (plainAnswer(res)) sendText(res, text);
  else res.type('application/json').send(text);
}

/** Whether the answer is a plain JSON body (see installJsonResponse): nothing of Express's `res.send` needed. */
function plainAnswer(res: Response): boolean {
  const headers = res.req.headers;
  return !(
    BODYLESS.has(res.statusCode) ||
    res.req.method === 'HEAD' ||
    headers['if-none-match'] !== undefined ||
    headers['if-modified-since'] !== undefined ||
    res.hasHeader('content-type') ||
    res.hasHeader('transfer-encoding')
  );
}

function sendText(res: Response, text: string): void {
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text, 'utf8');
}
