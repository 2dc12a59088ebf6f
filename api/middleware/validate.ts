import type { NextFunction, Request, Response } from 'express';
import type Joi from 'joi';
import type { RouteDefinition } from '../routing/route-definition.js';
import type { ValidatedInput } from '../request-context.js';
import { ValidationError, type FieldError } from '../../domain/shared/errors.js';
import { JOI_OPTIONS, toFieldError } from '../../domain/shared/joi-field-errors.js';

type InputPart = 'params' | 'query' | 'body';

/**
 * Validated path params remembered over all routes (see validParams): when this many are held, every route's
 * memory is dropped and starts again, so the memory stays bounded however many different ids clients send. One
 * bound over all routes rather than one per route: a per-route bound left most reads of a catalog of a few
 * thousand items to joi, each route's memory being dropped again and again.
 */
const REMEMBERED_PARAMS = 20_000;
const memories = new Set<Map<string, Record<string, unknown>>>();
let remembered = 0;

function remember(memory: Map<string, Record<string, unknown>>, key: string, value: Record<string, unknown>) {
  if (remembered >= REMEMBERED_PARAMS) {
    for (const held of memories) held.clear();
    remembered = 0;
  }
  memory.set(key, Object.freeze(value));
  remembered += 1;
}

/**
 * The route's params validator with a memory: path params are a few short strings whose validated value
 * depends on them alone, and the same ones come back again and again (an item read or changed many times a
 * second), so a valid set is validated by joi once and its (frozen) value reused. joi remembers results of
 * primitive schemas itself (`any.cache()`), not of objects; its object validation was ~4% of a read's CPU.
 * Invalid params are not remembered: they go through joi, with its messages, every time.
 */
function validParams(schema: Joi.ObjectSchema) {
  const memory = new Map<string, Record<string, unknown>>();
  memories.add(memory);
  return (raw: Record<string, string>): Joi.ValidationResult => {
    // The one param's value is the key (every route has at most one; with more, nothing is remembered: a
    // separator could be part of a decoded value).
    let key: string | undefined;
    let count = 0;
    for (const name in raw) {
      key = raw[name];
      count += 1;
    }
    const known = count === 1 ? memory.get(key!) : undefined;
    if (known) return { value: known, error: undefined };
    const result = schema.validate(raw);
    if (!result.error && count === 1) remember(memory, key!, result.value as Record<string, unknown>);
    return result;
  };
}

/** Longest query string whose validated value is remembered (longer ones, searches, go to joi every time). */
const REMEMBERED_QUERY_CHARS = 256;

/** A validated query made of scalars only: a copy of it shares nothing a handler could change. */
function scalarsOnly(value: Record<string, unknown>): boolean {
  for (const name in value) {
    const field = value[name];
    if (field !== null && typeof field === 'object') return false;
  }
  return true;
}

/**
 * The route's query validator with the same kind of memory, keyed by the query string (the query object is a
 * function of it): the same few query strings come back again and again (`?delta=1&reason=RESTOCK`, or none
 * on a read). Only valid queries of scalars are remembered, and every request gets its own copy.
 */
function validQuery(schema: Joi.ObjectSchema) {
  const memory = new Map<string, Record<string, unknown>>();
  memories.add(memory);
  return (req: Request): Joi.ValidationResult => {
    const url = req.originalUrl;
    const mark = url.indexOf('?');
    const key = mark < 0 ? '' : url.slice(mark + 1);
    const known = key.length <= REMEMBERED_QUERY_CHARS ? memory.get(key) : undefined;
    if (known) return { value: { ...known }, error: undefined };
    const result = schema.validate({ ...req.query });
    const value = result.value as Record<string, unknown>;
    if (!result.error && key.length <= REMEMBERED_QUERY_CHARS && scalarsOnly(value))
      remember(memory, key, { ...value });
    return result;
  };
}

/**
 * Validates the given parts of the request (default all three) against the route's joi schemas; the result,
 * merged into what an earlier call validated, is the handler's input.
 */
export function validateInput(route: RouteDefinition, parts: InputPart[] = ['params', 'query', 'body']) {
  // The validation options bound to each schema once (joi merges options given to validate() on every call).
  const params = route.request?.params?.prefs(JOI_OPTIONS);
  const query = route.request?.query?.prefs(JOI_OPTIONS);
  const body = route.request?.body?.prefs(JOI_OPTIONS);
  // Memories only for the parts this step validates.
  const paramsCheck = params && parts.includes('params') ? validParams(params) : undefined;
  const checks: Record<InputPart, ((req: Request) => Joi.ValidationResult) | undefined> = {
    params: paramsCheck && (req => paramsCheck(req.params as Record<string, string>)),
    query: query && parts.includes('query') ? validQuery(query) : undefined,
    body: body && (req => body.validate(req.body)),
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const input: ValidatedInput = res.locals.input ?? { params: {}, query: {}, body: undefined };
    const errors: FieldError[] = [];
    for (const part of parts) {
      const check = checks[part];
      if (!check) {
        input[part] = part === 'body' ? req.body : part === 'query' ? { ...req.query } : req.params;
        continue;
      }
      if (part === 'body' && (req.body === undefined || req.body === null) && body?.type === 'object') {
        errors.push({ field: 'body', messageKey: 'error.body.required' });
        continue;
      }
      const { value, error } = check(req);
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
