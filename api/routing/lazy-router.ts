import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/**
 * A router whose handlers (and the modules behind them) are loaded on the first request that reaches it, so a
 * process that never serves it never holds it (Swagger UI assets, bull-board). A failed load is retried on the
 * next request.
 */
export function lazyRouter(load: () => Promise<RequestHandler | RequestHandler[]>): RequestHandler {
  let router: Promise<Router> | undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    router ??= load().then(
      handlers => Router().use(...(Array.isArray(handlers) ? handlers : [handlers])),
      (error: unknown) => {
        router = undefined;
        throw error;
      },
    );
    router.then(r => r(req, res, next), next);
  };
}
