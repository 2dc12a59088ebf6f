import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../../config/env.js';
import type { RouteDefinition } from '../routing/route-definition.js';
import { ForbiddenError, UnauthorizedError } from '../../domain/shared/errors.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Every method but GET, HEAD and OPTIONS (in any case; Node gives a request's method in upper case). */
export const isWrite = (method: string) => !READS.has(method) && !READS.has(method.toUpperCase());

/**
 * Demo mode first (every write is 403 for everyone), then authentication (401), then role (403).
 * Demo-mode named reads are public for anonymous callers while APP_DEMO_READONLY is on.
 */
export const authorize =
  (route: RouteDefinition, config: Config) => (req: Request, res: Response, next: NextFunction) => {
    const write = isWrite(route.method);
    if (write && config.demoReadonly && !route.allowedInDemo)
      return next(new ForbiddenError('error.demo.readonly'));
    if (route.access === 'public') return next();
    // Anonymous callers only: a signed-in caller keeps the route's role rule (changes by employee and an employee's changes stay ADMIN-only).
    if (!write && route.demoRead && config.demoReadonly && !req.actor) return next();
    if (!req.actor) return next(res.locals.authError ?? new UnauthorizedError());
    if (route.access === 'admin' && req.actor.role !== 'ROLE_ADMIN')
      return next(new ForbiddenError('error.forbidden'));
    next();
  };
