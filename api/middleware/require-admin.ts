import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError, UnauthorizedError } from '../../domain/shared/errors.js';

/** For non-route mounts (the queue dashboard): 401 without a user (session or bearer), 403 unless ADMIN. */
export const requireAdmin = (req: Request, res: Response, next: NextFunction) => {
  if (!req.actor) return next(res.locals.authError ?? new UnauthorizedError());
  if (req.actor.role !== 'ROLE_ADMIN') return next(new ForbiddenError('error.forbidden'));
  next();
};
