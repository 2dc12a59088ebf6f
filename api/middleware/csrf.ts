import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../../config/env.js';
import { ForbiddenError } from '../../domain/shared/errors.js';
import { isWrite } from './authorize.js';

/** This service's own origin and every CORS origin: the only origins trusted for cookie-authenticated writes. */
export function trustedOrigins(config: Config): Set<string> {
  return new Set([new URL(config.publicUrl).origin, ...config.corsOrigins]);
}

function originOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the session (loaded by express-session from whatever spelling of the cookie header it accepts)
 * carries a signed-in user: the request's authority comes from the cookie. A stale, forged or anonymous
 * session (e.g. the OIDC state of a login in progress) grants nothing, so it needs no origin check.
 */
const authenticatedBySession = (req: Request): boolean => typeof req.session?.userId === 'number';

/**
 * CSRF defence for SameSite=None session cookies (OWASP: verify the source origin; Go's net/http CrossOriginProtection):
 * a state-changing request authenticated by its session (no Authorization header) must name a trusted
 * origin in `Origin`, or failing that in `Referer`, exactly. `null`, missing, malformed and look-alike origins
 * are 403. Bearer requests are exempt: a browser cannot attach that header cross-site without a CORS preflight.
 */
export const csrfGuard = (config: Config) => {
  const trusted = trustedOrigins(config);
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!isWrite(req.method) || req.get('authorization') || !authenticatedBySession(req)) return next();
    const origin = req.get('origin');
    const source = origin !== undefined ? originOf(origin) : originOf(req.get('referer'));
    if (source && trusted.has(source)) return next();
    next(new ForbiddenError('auth.csrf.origin'));
  };
};
