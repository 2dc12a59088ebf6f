import type { NextFunction, Request, Response } from 'express';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;
let counter = 0;

/** `SR-<epoch millis>-<4 digits>`. */
export function newCorrelationId(): string {
  counter = (counter + 1) % 10000;
  return `SR-${Date.now()}-${String(counter).padStart(4, '0')}`;
}

/** Accepts a safe caller-supplied `X-Correlation-Id` or generates one; echoes it on every response. */
export function correlationId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.headers['x-correlation-id'];
  req.correlationId = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : newCorrelationId();
  res.setHeader('X-Correlation-Id', req.correlationId);
  next();
}
