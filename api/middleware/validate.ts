import type { NextFunction, Request, Response } from 'express';
import type { RouteDefinition } from '../routing/route-definition.js';
import type { ValidatedInput } from '../request-context.js';
import { ValidationError, type FieldError } from '../../domain/shared/errors.js';
import { JOI_OPTIONS, toFieldError } from '../../domain/shared/joi-field-errors.js';

type InputPart = 'params' | 'query' | 'body';

/**
 * Validates the given parts of the request (default all three) against the route's joi schemas; the result,
 * merged into what an earlier call validated, is the handler's input.
 */
export function validateInput(route: RouteDefinition, parts: InputPart[] = ['params', 'query', 'body']) {
  // The validation options bound to each schema once (joi merges options given to validate() on every call).
  const schemas = {
    params: route.request?.params?.prefs(JOI_OPTIONS),
    query: route.request?.query?.prefs(JOI_OPTIONS),
    body: route.request?.body?.prefs(JOI_OPTIONS),
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const input: ValidatedInput = res.locals.input ?? { params: {}, query: {}, body: undefined };
    const errors: FieldError[] = [];
    for (const part of parts) {
      const schema = schemas[part];
      const raw = part === 'body' ? req.body : part === 'query' ? { ...req.query } : req.params;
      if (!schema) {
        input[part] = part === 'body' ? req.body : raw;
        continue;
      }
      if (part === 'body' && (raw === undefined || raw === null) && schema.type === 'object') {
        errors.push({ field: 'body', messageKey: 'error.body.required' });
        continue;
      }
      const { value, error } = schema.validate(raw);
      if (error) errors.push(...error.details.map(d => toFieldError(d, key => req.i18n.exists(key))));
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
