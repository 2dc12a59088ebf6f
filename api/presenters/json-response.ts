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
    const headers = this.req.headers;
    if (
      body === undefined ||
      BODYLESS.has(this.statusCode) ||
      this.req.method === 'HEAD' ||
      headers['if-none-match'] !== undefined ||
      headers['if-modified-since'] !== undefined ||
      this.hasHeader('content-type') ||
      this.hasHeader('transfer-encoding')
    )
      return expressJson.call(this, value);
    this.setHeader('Content-Type', JSON_TYPE);
    this.setHeader('Content-Length', Buffer.byteLength(body));
    this.end(body, 'utf8');
    return this;
  };
}
