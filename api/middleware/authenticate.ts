import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../../config/env.js';
import { findUserById, findUserByUsername, type UserRow } from '../../domain/users/load-actor.js';
import { verifyToken } from '../../domain/users/tokens.js';
import { UnauthorizedError } from '../../domain/shared/errors.js';
import type { Actor } from '../request-context.js';

const BEARER = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)$/i;

const toActor = (user: UserRow, via: Actor['via']): Actor => ({
  userId: user.id,
  username: user.username,
  email: user.email,
  role: user.role,
  via,
});

/**
 * Resolves `req.actor` from a Bearer JWT (preferred) or the session. The user and role are re-read from the
 * database every time. A bad or expired token is remembered and answered with 401 where authentication is
 * required (public routes ignore it).
 */
export const authenticate = (config: Config) => async (req: Request, res: Response, next: NextFunction) => {
  const header = req.get('authorization');
  if (header) {
    const match = BEARER.exec(header);
    if (!match) {
      res.locals.authError = new UnauthorizedError('error.token.invalid');
      return next();
    }
    try {
      const { sub } = await verifyToken(match[1], config.jwtSecret);
      const user = await findUserByUsername(req.em, sub);
      if (user) req.actor = toActor(user, 'bearer');
      else res.locals.authError = new UnauthorizedError('error.token.invalid');
    } catch (error) {
      if (error instanceof UnauthorizedError) res.locals.authError = error;
      else return next(error);
    }
    return next();
  }
  const userId = req.session?.userId;
  if (typeof userId === 'number') {
    const user = await findUserById(req.em, userId);
    if (user) req.actor = toActor(user, 'session');
  }
  next();
};

declare module 'express-session' {
  interface SessionData {
    userId?: number;
    returnTo?: string;
  }
}
