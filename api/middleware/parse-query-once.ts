import express, { type NextFunction, type Request, type Response } from 'express';
import { lazyRequestProperty } from '../lazy-request-property.js';

/** Express 5's own `req.query` getter: parses the query string with the app's query parser. */
const expressQuery = Object.getOwnPropertyDescriptor(express.request, 'query')!;

const withQueryOnce = lazyRequestProperty('query', req => expressQuery.get!.call(req) as Request['query']);

/**
 * Express 5's `req.query` is a getter that parses the query string again on every read (language detection,
 * the NUL check and validation each read it); this one parses it on the first read and keeps the result. An
 * accessor on the app's request prototype (lazyRequestProperty): defining an own `query` property on every
 * request, as before, cost a property definition per request and changed the request object's shape.
 */
export function parseQueryOnce(req: Request, _res: Response, next: NextFunction): void {
  withQueryOnce(req);
  next();
}
