import type { Request } from 'express';
import { AppError, PagingError } from '../../domain/shared/errors.js';

/** The request path without its query string, as every error body reports it. */
export const requestPath = (req: Request): string => req.originalUrl.split('?')[0];

function translate(req: Request, key: string, params: Record<string, unknown>): string {
  return req.t ? req.t(key, params) : key;
}

/**
 * Builds the error body for a route's style: the inventory central body
 * `{error, message, status, timestamp, path, correlationId, messageKey, fieldErrors?}`, the smaller paging body,
 * or the product envelope `{success:false, message, data, error, status, timestamp, path, correlationId, details?}`.
 */
export function errorBody(req: Request, error: AppError): Record<string, unknown> {
  const message = translate(req, error.messageKey, error.params);
  const timestamp = new Date().toISOString();
  const fieldErrors = error.fieldErrors.map(f => ({
    field: f.field,
    message: translate(req, f.messageKey, f.params ?? {}),
    ...(f.index === undefined ? {} : { index: f.index }),
  }));

  if (req.errorStyle === 'product') {
    const validation = error.status === 400 && fieldErrors.length > 0;
    return {
      success: false,
      message,
      data: fieldErrors.length > 0 ? Object.fromEntries(fieldErrors.map(f => [f.field, f.message])) : null,
      error: validation ? 'VALIDATION_ERROR' : error.code,
      status: error.status,
      timestamp,
      path: requestPath(req),
      correlationId: req.correlationId,
      ...(fieldErrors.length > 0 || error.details !== undefined
        ? { details: fieldErrors.length > 0 ? fieldErrors : error.details }
        : {}),
    };
  }
  if (error instanceof PagingError) {
    return { error: 'bad_request', message, timestamp, correlationId: req.correlationId };
  }
  return {
    error: error.code,
    message,
    status: error.status,
    timestamp,
    path: requestPath(req),
    correlationId: req.correlationId,
    messageKey: error.messageKey,
    ...(fieldErrors.length > 0
      ? { fieldErrors: Object.fromEntries(fieldErrors.map(f => [f.field, f.message])) }
      : {}),
    ...(error.details !== undefined ? { details: error.details } : {}),
  };
}
