import type { Express, NextFunction, Request, Response } from 'express';
import type { Config } from '../../config/env.js';
import type { RouteDefinition } from './route-definition.js';
import { authorize, isWrite } from '../middleware/authorize.js';
import { retryTransactionConflicts } from './retry-transaction-conflicts.js';
import { validateInput } from '../middleware/validate.js';
import type { ValidatedInput } from '../request-context.js';

/**
 * Mounts each route as: error style -> authorize -> validate -> handler (a write handler is run again when
 * its transaction lost a deadlock or a serialization check). A route whose resource must exist
 * validates its path params, answers 404 for a missing resource, and only then validates query and body.
 */
export function mountRoutes(app: Express, routes: RouteDefinition[], config: Config): void {
  for (const route of routes) {
    const style = (req: Request, _res: Response, next: NextFunction) => {
      req.errorStyle = route.errorStyle ?? 'central';
      next();
    };
    const handle = (req: Request, res: Response) => route.handler(req, res, res.locals.input);
    const run = isWrite(route.method)
      ? (req: Request, res: Response) => retryTransactionConflicts(req, res, async () => handle(req, res))
      : async (req: Request, res: Response) => {
          await handle(req, res);
        };
    const validate = route.mustExist
      ? [
          validateInput(route, ['params']),
          mustExist(route.mustExist),
          validateInput(route, ['query', 'body']),
        ]
      : [validateInput(route)];
    app[route.method](route.path, style, authorize(route, config), ...validate, run);
  }
}

function mustExist(check: NonNullable<RouteDefinition['mustExist']>) {
  return (req: Request, res: Response, next: NextFunction) => {
    check(req.em, (res.locals.input as ValidatedInput).params).then(() => next(), next);
  };
}
