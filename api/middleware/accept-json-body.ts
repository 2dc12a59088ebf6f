import type { NextFunction, Request, Response } from 'express';
import { UnsupportedMediaTypeError } from '../../domain/shared/errors.js';

const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * A write takes a JSON body or none (an upload route reads its own content types): a body of any other
 * content type, or of none, is 415 `unsupported_media_type`, never parsed and never taken as "no body".
 */
export function acceptJsonBody(req: Request, _res: Response, next: NextFunction): void {
  if (!hasBody(req) || req.is('application/json')) return next();
  const type = (req.get('content-type') ?? 'none').split(';')[0].trim().slice(0, 100) || 'none';
  next(new UnsupportedMediaTypeError('error.unsupported.media.type', { params: { type } }));
}
