import type { NextFunction, Request, Response } from 'express';
import { ValidationError } from '../../domain/shared/errors.js';

function findNul(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (depth > 64 || value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const found = key.includes('\u0000') ? path : findNul(child, path ? `${path}.${key}` : key, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * PostgreSQL text cannot hold a NUL character (the driver fails with a protocol error), so input carrying one
 * is refused for every route with a 400 naming the field, before any handler runs.
 */
export function rejectNul(req: Request, _res: Response, next: NextFunction): void {
  const field =
    findNul(req.query, 'query') ??
    findNul(req.body, 'body') ??
    (req.path.includes('\u0000') ? 'path' : undefined);
  if (field === undefined) return next();
  next(
    new ValidationError('error.nul.character', {
      fieldErrors: [{ field, messageKey: 'error.nul.character' }],
    }),
  );
}
