import type { NextFunction, Request, Response } from 'express';

/**
 * Express 5's `req.query` is a getter that parses the query string again on every read (language detection,
 * the NUL check and validation each read it); this parses it once and keeps the result on the request.
 */
export function parseQueryOnce(req: Request, _res: Response, next: NextFunction): void {
  Object.defineProperty(req, 'query', {
    value: req.query,
    writable: true,
    configurable: true,
    enumerable: true,
  });
  next();
}
