import type { NextFunction, Request, Response } from 'express';
import {
  AppError,
  NotFoundError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../../domain/shared/errors.js';
import { translateDbError } from '../../domain/shared/db-errors.js';
import { errorBody } from '../presenters/error-body.js';
import { MAX_JSON_DEPTH } from './json-body.js';

/** body-parser and http-errors failures carry `type`/`status`; map them into the error vocabulary. */
function fromHttpError(error: unknown): AppError | undefined {
  const e = error as { type?: string; status?: number; statusCode?: number } | null;
  if (!e || typeof e !== 'object') return undefined;
  if (e.type === 'entity.too.large') return new AppError('payload_too_large', 413, 'error.payload.too.large');
  if (e.type === 'entity.parse.failed') return new ValidationError('error.malformed.json');
  if (e.type === 'entity.too.deep')
    return new ValidationError('error.json.too.deep', { params: { max: MAX_JSON_DEPTH } });
  if (e.type === 'entity.encoding.invalid') return new ValidationError('error.body.encoding');
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
    return new UnsupportedMediaTypeError('error.unsupported.charset');
  const status = e.status ?? e.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new AppError('bad_request', status, 'error.invalid.parameter');
  return undefined;
}

/** Product-service paths answer errors in the product envelope, from body parsing on. */
export const PRODUCT_PATHS = /^\/api\/(products(\/|$)|auth\/login$)/;

export function errorStyle(req: Request, _res: Response, next: NextFunction): void {
  req.errorStyle = PRODUCT_PATHS.test(req.path) ? 'product' : 'central';
  next();
}

/** Unknown route: 404 in the route family's error shape. */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new NotFoundError('error.route.not.found', { params: { path: req.path.slice(0, 200) } }));
}

/** The one place where errors become HTTP responses. Nothing internal (stack, SQL) reaches the body. */
export function errorHandler(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  const known = translateDbError(error) ?? fromHttpError(error);
  const appError = known ?? new AppError('internal_server_error', 500, 'error.internal.server.error');
  if (!known) req.log.error({ err: error, correlationId: req.correlationId }, 'unhandled error');
  else if (appError.status >= 500)
    req.log.warn({ err: error, correlationId: req.correlationId }, appError.messageKey);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
  res.status(appError.status).json(errorBody(req, appError));
}
