import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../../domain/shared/errors.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * METRICS_TOKEN: on a platform every path is public, so `/metrics` answers only `Authorization: Bearer
 * <token>` when a token is set (401 otherwise); unset, it stays open (a private network's scraper).
 * Digests of equal length make the comparison take the same time whatever the client sent.
 */
export function requireMetricsToken(token: string | undefined) {
  if (!token) return (_req: Request, _res: Response, next: NextFunction) => next();
  const expected = digest(`Bearer ${token}`);
  return (req: Request, _res: Response, next: NextFunction) => {
    const given = req.headers.authorization;
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return next();
    next(new UnauthorizedError());
  };
}
