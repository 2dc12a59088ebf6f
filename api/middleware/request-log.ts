import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { redactUrl } from '../../config/redact-url.js';

/** What a request's log records say about it: the URL with the values of sensitive query parameters redacted. */
export const requestLogFields = (req: Request) => ({
  method: req.method,
  url: redactUrl(req.originalUrl),
  id: req.correlationId,
});

/**
 * One JSON line per request (`request completed`, or `request aborted` when the client went away first), at
 * `error` for 5xx, else `info`, with the status and the response time. `req.log` is a child logger bound to
 * the request, created only when something logs through it (errors), not for every request.
 */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      enumerable: false,
      get: () => (child ??= logger.child({ req: requestLogFields(req) })),
      set: (value: Logger) => (child = value),
    });
    res.once('close', () => {
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          req: requestLogFields(req),
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
        },
        res.writableFinished ? 'request completed' : 'request aborted',
      );
    });
    next();
  };
}
