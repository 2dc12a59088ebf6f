import findMyWay, { type HTTPMethod } from 'find-my-way';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { runChain } from './run-chain.js';

export interface RouteEntry {
  /** Express path, e.g. `/api/inventory/:id` (named parameters only). */
  path: string;
  chain: RequestHandler[];
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A path that cannot be decoded: 400 (as Express answers a parameter it cannot decode), never a 404 or 500. */
const badUrl = () => Object.assign(new Error('Failed to decode the request path'), { status: 400 });

/**
 * The API's routes in a radix tree (find-my-way, the router of Fastify): one lookup per request instead of
 * Express matching a request against every route in turn. Matching follows Express's defaults (case-
 * insensitive, a trailing slash ignored, parameters decoded); a static segment wins over a parameter. A HEAD
 * request is answered by the GET route. On a match `req.params` and `req.route.path` are set and the route's
 * chain runs; otherwise the request goes on to what follows (docs, metrics, 404).
 */
export function routeTable(routes: Array<RouteEntry & { method: Method }>): RequestHandler {
  const router = findMyWay({
    caseSensitive: false,
    ignoreTrailingSlash: true,
    maxParamLength: 2048,
    // Given, so that `find` answers a bad path with a route without store (below) rather than "no route".
    onBadUrl: () => undefined,
  });
  // `req.route` is the same frozen object for every request of a route.
  for (const { method, path, chain } of routes)
    router.on(method, path, () => undefined, { path, chain, route: Object.freeze({ path }) });
  return (req: Request, res: Response, next: NextFunction) => {
    const found = router.find((req.method === 'HEAD' ? 'GET' : req.method) as HTTPMethod, req.path);
    if (found === null) return next();
    const entry = found.store as (RouteEntry & { route: { path: string } }) | null;
    if (entry === null) return next(badUrl());
    req.params = found.params as Record<string, string>;
    (req as { route?: unknown }).route = entry.route;
    runChain(entry.chain, req, res, next);
  };
}
