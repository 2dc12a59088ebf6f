import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Config } from '../../config/env.js';
import type { RouteDefinition } from './route-definition.js';
import { authorize, isWrite } from '../middleware/authorize.js';
import { retryTransactionConflicts } from './retry-transaction-conflicts.js';
import { validateInput } from '../middleware/validate.js';
import { acceptJsonBody } from '../middleware/accept-json-body.js';
import type { ValidatedInput } from '../request-context.js';
import { routeTable, type Method } from './route-table.js';

/**
 * The routes as one middleware (a radix-tree lookup, see route-table.ts), each route running: error style ->
 * authorize -> (a write: 415 for a body that is not JSON) -> validate -> handler (a write handler is run again when its transaction lost a deadlock or a
 * serialization check). A route whose resource must exist validates its path params, answers 404 for a
 * missing resource, and only then validates query and body.
 */
export function dispatchRoutes(
  routes: RouteDefinition[],
  config: Config,
  /** Which database runs a route's work (replica-reads.ts); absent: the primary, as always. */
  selectConnection?: (route: RouteDefinition, run: Run) => Run,
): RequestHandler {
  return routeTable(
    routes.map(route => {
      const errorStyle = route.errorStyle ?? 'central';
      const style = (req: Request, _res: Response, next: NextFunction) => {
        req.errorStyle = errorStyle;
        next();
      };
      const handle = (req: Request, res: Response) => route.handler(req, res, res.locals.input);
      // An upload is read once, as it arrives: run again, the handler would find the body consumed (400), so
      // its conflict answers 409 at once.
      const direct: Run =
        isWrite(route.method) && !route.request?.upload
          ? (req: Request, res: Response) => retryTransactionConflicts(req, res, async () => handle(req, res))
          : // The handler's own promise: run-chain passes its rejection (or a synchronous throw) on as the error.
            handle;
      const run = selectConnection ? selectConnection(route, direct) : direct;
      const validate = route.mustExist
        ? [
            validateInput(route, ['params']),
            mustExist(route.mustExist),
            validateInput(route, ['query', 'body']),
          ]
        : [validateInput(route)];
      const bodyType = isWrite(route.method) && !route.request?.upload ? [acceptJsonBody] : [];
      return {
        method: route.method.toUpperCase() as Method,
        path: route.path,
        chain: [style, authorize(route, config), ...bodyType, ...validate, run] as RequestHandler[],
      };
    }),
  );
}

type Run = (req: Request, res: Response) => unknown;

function mustExist(check: NonNullable<RouteDefinition['mustExist']>) {
  return (req: Request, res: Response, next: NextFunction) => {
    check(req.em, (res.locals.input as ValidatedInput).params, req).then(() => next(), next);
  };
}
