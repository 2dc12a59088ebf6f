import type { NextFunction, Request, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config/env.js';
import { findUserById, findUserByUsername, type UserRow } from '../../domain/users/load-actor.js';
import { cachedTokenVerifier } from '../../domain/users/tokens.js';
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

/** Where accounts come from: the pushed in-memory cache, or (without one) the database on every request. */
interface AccountSource {
  /** Without waiting, when the account is at hand (the pushed cache); undefined otherwise. */
  cachedByUsername?(username: string): UserRow | undefined;
  byUsername(em: () => EntityManager, username: string): Promise<UserRow | undefined>;
  byUserId(em: () => EntityManager, id: number): Promise<UserRow | undefined>;
}

const fromDatabase: AccountSource = {
  byUsername: (em, username) => findUserByUsername(em(), username),
  byUserId: (em, id) => findUserById(em(), id),
};

/**
 * Resolves `req.actor` from a Bearer JWT (preferred) or the session. The user and role are the account's
 * current ones (never the token's claim): from the account cache, which every change of the account reaches
 * within milliseconds (domain/users/account-cache.ts), or from the database when no cache is given. A verified
 * token is remembered until its `exp`. A bad or expired token is remembered and answered with 401 where
 * authentication is required (public routes ignore it).
 */
export const authenticate = (config: Config, accounts: AccountSource = fromDatabase) => {
  const verify = cachedTokenVerifier(config.jwtSecret);
  // The request's EntityManager is forked only when an account has to be read from the database.
  const bearer = async (req: Request, res: Response, token: string) => {
    try {
      const { sub } = await verify(token);
      const user = await accounts.byUsername(() => req.em, sub);
      if (user) req.actor = toActor(user, 'bearer');
      else res.locals.authError = new UnauthorizedError('error.token.invalid');
    } catch (error) {
      if (error instanceof UnauthorizedError) res.locals.authError = error;
      else throw error;
    }
  };
  const session = async (req: Request, userId: number) => {
    const user = await accounts.byUserId(() => req.em, userId);
    if (user) req.actor = toActor(user, 'session');
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    if (header) {
      // The common case answers without a promise and without parsing the header: `Bearer <a token verified
      // before>`, its account in the cache.
      const cachedSub = header.startsWith('Bearer ') ? verify.cached(header.slice(7)) : undefined;
      const cachedUser = cachedSub === undefined ? undefined : accounts.cachedByUsername?.(cachedSub);
      if (cachedUser) {
        req.actor = toActor(cachedUser, 'bearer');
        return next();
      }
      const match = BEARER.exec(header);
      if (!match) {
        res.locals.authError = new UnauthorizedError('error.token.invalid');
        return next();
      }
      return void bearer(req, res, match[1]).then(() => next(), next);
    }
    const userId = req.session?.userId;
    if (typeof userId === 'number') return void session(req, userId).then(() => next(), next);
    next();
  };
};

declare module 'express-session' {
  interface SessionData {
    userId?: number;
    returnTo?: string;
  }
}
