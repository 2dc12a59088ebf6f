import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's response headers, worked out once: helmet's middleware (twelve of them) reads nothing of the
 * request, so it runs here once against a recording response and every request gets the recorded headers
 * set in one loop, instead of twelve middleware calls per request.
 */
export function securityHeaders(options: HelmetOptions) {
  const headers = new Map<string, string>();
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers.set(name, String(value));
    },
    removeHeader: (name: string) => {
      headers.delete(name);
      removed.push(name);
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => undefined);
  const pairs = [...headers];
  return (_req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of pairs) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}
