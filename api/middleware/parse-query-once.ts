import express, { type Express, type Request } from 'express';
import { defineLazyRequestProperty } from '../lazy-request-property.js';

/** Express 5's own `req.query` getter: parses the query string with the app's query parser. */
const expressQuery = Object.getOwnPropertyDescriptor(express.request, 'query')!;

/**
 * Express 5's `req.query` is a getter that parses the query string again on every read (language detection,
 * the NUL check and validation each read it); this one parses it on the first read and keeps the result.
 */
export const installQueryOnce = (app: Express): void =>
  defineLazyRequestProperty(app.request, 'query', req => expressQuery.get!.call(req) as Request['query']);
