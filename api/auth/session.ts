import type { NextFunction, Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import { RedisStore } from 'connect-redis';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/env.js';
import { ServiceUnavailableError } from '../../domain/shared/errors.js';

export const SESSION_COOKIE = 'SESSION';
/** The reference client also clears the Spring cookie name at logout. */
export const LEGACY_SESSION_COOKIE = 'JSESSIONID';
export const SESSION_IDLE_SECONDS = 30 * 60;

export const SESSION_COOKIE_ATTRIBUTES = {
  path: '/',
  httpOnly: true,
  secure: true,
  sameSite: 'none',
} as const;

/**
 * Browser sessions in Redis: cookie `SESSION` (HttpOnly, Secure, SameSite=None), rolling idle timeout.
 * A Redis failure while loading or saving a session answers 503, never 500 or a hang.
 */
export function sessionMiddleware(config: Config, redis: Redis): RequestHandler {
  const store = new RedisStore({
    client: redis,
    prefix: `${config.redisPrefix}:sess:`,
    ttl: SESSION_IDLE_SECONDS,
  });
  const handler = session({
    name: SESSION_COOKIE,
    secret: config.sessionSecret,
    store,
    resave: false,
    saveUninitialized: false,
    rolling: true,
    proxy: true,
    cookie: { ...SESSION_COOKIE_ATTRIBUTES, maxAge: SESSION_IDLE_SECONDS * 1000 },
  });
  return (req: Request, res: Response, next: NextFunction) =>
    handler(req, res, (error?: unknown) =>
      next(error ? new ServiceUnavailableError('error.session.unavailable', { cause: error }) : undefined),
    );
}
