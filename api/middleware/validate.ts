import type { NextFunction, Request, Response } from 'express';
import type Joi from 'joi';
import type { RouteDefinition } from '../routing/route-definition.js';
import type { ValidatedInput } from '../request-context.js';
import { ValidationError, type FieldError, type MessageParams } from '../../domain/shared/errors.js';

const OPTIONS: Joi.ValidationOptions = { abortEarly: false, convert: true, stripUnknown: true };

/** Scalars of a list joined for a message, bounded (nested values are left out, never walked). */
function listParam(values: unknown[]): string {
  return values
    .slice(0, 50)
    .filter(v => v === null || typeof v !== 'object')
    .map(String)
    .join(', ')
    .slice(0, 500);
}

function toFieldError(req: Request, detail: Joi.ValidationErrorItem): FieldError {
  const field = detail.path.map(String).join('.') || String(detail.context?.key ?? 'body');
  const params: MessageParams = { field };
  for (const [key, value] of Object.entries(detail.context ?? {})) {
    if (typeof value === 'string' || typeof value === 'number') params[key] = value;
    // Lists of allowed values (`valids`) only: never render a rejected value, which may be any JSON.
    if (Array.isArray(value) && key !== 'value') params[key] = listParam(value);
  }
  // Schemas name an i18n key through `.messages()`; otherwise a generic key per joi error type.
  const messageKey = req.i18n.exists(detail.message)
    ? detail.message
    : req.i18n.exists(`validation.${detail.type}`)
      ? `validation.${detail.type}`
      : 'error.invalid.parameter';
  return { field, messageKey, params };
}

type InputPart = 'params' | 'query' | 'body';

/**
 * Validates the given parts of the request (default all three) against the route's joi schemas; the result,
 * merged into what an earlier call validated, is the handler's input.
 */
export function validateInput(route: RouteDefinition, parts: InputPart[] = ['params', 'query', 'body']) {
  return (req: Request, res: Response, next: NextFunction) => {
    const input: ValidatedInput = res.locals.input ?? { params: {}, query: {}, body: undefined };
    const errors: FieldError[] = [];
    for (const part of parts) {
      const schema = route.request?.[part];
      const raw = part === 'body' ? req.body : part === 'query' ? { ...req.query } : req.params;
      if (!schema) {
        input[part] = part === 'body' ? req.body : raw;
        continue;
      }
      if (part === 'body' && (raw === undefined || raw === null) && schema.type === 'object') {
        errors.push({ field: 'body', messageKey: 'error.body.required' });
        continue;
      }
      const { value, error } = schema.validate(raw, OPTIONS);
      if (error) errors.push(...error.details.map(d => toFieldError(req, d)));
      else input[part] = value;
    }
    if (errors.length > 0) {
      next(new ValidationError(errors[0].messageKey, { fieldErrors: errors, params: errors[0].params }));
      return;
    }
    res.locals.input = input;
    next();
  };
}
