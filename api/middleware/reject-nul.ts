import type { NextFunction, Request, Response } from 'express';
import { ValidationError } from '../../domain/shared/errors.js';

/** Collects the paths (named as joi names fields: `name`, `updates.3.sku`) of every string holding a NUL. */
function collectNul(value: unknown, path: string, found: string[], depth = 0): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push(path);
    return;
  }
  if (depth > 64 || value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) found.push(childPath);
    else collectNul(child, childPath, found, depth + 1);
  }
}

/**
 * PostgreSQL text cannot hold a NUL character (the driver fails with a protocol error), so input carrying one
 * is refused for every route with a 400 naming each field, before any handler runs.
 */
export function rejectNul(req: Request, _res: Response, next: NextFunction): void {
  // The HTTP parser refuses a raw NUL in the request line, so the path and the query can only carry one as
  // `%00`: a request without it and without a body has none (and its query string is not parsed for this).
  if (req.body === undefined && !req.originalUrl.includes('%00')) return next();
  const fields: string[] = [];
  // `req.path` is still percent-encoded: a NUL in a path segment arrives there as `%00`.
  if (req.path.includes('%00') || req.path.includes('\u0000')) fields.push('path');
  collectNul(req.query, '', fields);
  collectNul(req.body, '', fields);
  if (fields.length === 0) return next();
  const messageKey = 'error.nul.character';
  next(new ValidationError(messageKey, { fieldErrors: fields.map(field => ({ field, messageKey })) }));
}
