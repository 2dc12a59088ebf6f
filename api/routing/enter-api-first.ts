import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { runChain } from './run-chain.js';

/** What the API list passed on to Express's router: nothing (not an API route) or its error. */
const PASSED_ON = Symbol('passed on by the API list');
type Passed = Request & { [PASSED_ON]?: unknown };

/**
 * Runs `chain` (the middleware every request passes, then the API routes' dispatch) for every request BEFORE
 * Express's router, which sees only what the list passes on: a request no API route matched, or an error (its
 * first layer hands it on to the error handler). The list ran as the router's first layer before; the router's
 * work for that layer (path matching, param merging, the `next` closure, restoring the request afterwards,
 * the final handler made for every request) was a visible share of a read's CPU. The request is prepared as
 * Express prepares it (app.handle): the app's request and response prototypes, `req.res`/`res.req`,
 * `res.locals`, `req.originalUrl`, and `req.baseUrl` of the app (''), so everything in the list and the
 * routes sees what it saw as a layer.
 */
export function enterApiFirst(app: Express, chain: readonly RequestHandler[]): void {
  app.use((req: Request, _res: Response, next: NextFunction) => next((req as Passed)[PASSED_ON]));
  const withHandle = app as unknown as { handle: Handle };
  const expressHandle = withHandle.handle.bind(app);
  withHandle.handle = (req, res, callback) => {
    req.res = res;
    res.req = req;
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
    if (!res.locals) res.locals = Object.create(null);
    req.originalUrl ||= req.url;
    req.baseUrl = '';
    runChain(chain, req, res, (error?: unknown) => {
      if (error !== undefined && error !== null) (req as Passed)[PASSED_ON] = error;
      expressHandle(req, res, callback);
    });
  };
}

/** Express's `app.handle` (not in its type declarations): what `app(req, res)` runs. */
type Handle = (req: Request, res: Response, callback?: NextFunction) => void;
