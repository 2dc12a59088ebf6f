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
export function sessionMiddleware(
  config: Config,
  redis: Redis,
  sessionlessPaths: readonly string[] = [],
): RequestHandler {
  const sessionless = new Set(sessionlessPaths);
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
  const localHttp = config.nodeEnv === 'development' && isLoopbackHttp(config.publicUrl);
  const cookiePrefix = `${SESSION_COOKIE}=`;
  return (req: Request, res: Response, next: NextFunction) => {
    // A bearer API call without the session cookie has no session: nothing to load, and nothing to create
    // (express-session would generate a session id for it on every request, only to throw it away).
    const cookie = req.headers.cookie;
    if (req.headers.authorization && !cookie?.includes(cookiePrefix) && req.path.startsWith('/api/'))
      return next();
    // Health checks answer what they check, whatever the session store does (no session is loaded for them).
    if (sessionless.has(req.path)) return next();
    // Development on http://localhost: browsers accept Secure cookies from loopback origins, but
    // express-session only sends them over https. Count every request as https for the session cookie,
    // whatever a local reverse proxy says in X-Forwarded-Proto (nginx sends `http` on a plain-http setup).
    if (localHttp) req.headers['x-forwarded-proto'] = 'https';
    handler(req, res, (error?: unknown) =>
      next(error ? new ServiceUnavailableError('error.session.unavailable', { cause: error }) : undefined),
    );
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLoopbackHttp(publicUrl: string): boolean {
  const url = new URL(publicUrl);
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}
