import type Joi from 'joi';
import type { FieldError, MessageParams } from './errors.js';

/** Joi's options for every input: all errors at once, strings converted, unknown keys dropped. */
export const JOI_OPTIONS: Joi.ValidationOptions = { abortEarly: false, convert: true, stripUnknown: true };

/** Scalars of a list joined for a message, bounded (nested values are left out, never walked). */
function listParam(values: unknown[]): string {
  return values
    .slice(0, 50)
    .filter(v => v === null || typeof v !== 'object')
    .map(String)
    .join(', ')
    .slice(0, 500);
}

/**
 * One joi error -> a field error with an i18n key: schemas name their key through `.messages()`; otherwise a
 * generic key per joi error type, else `error.invalid.parameter`. `isKey` tells which keys the catalog has.
 */
export function toFieldError(detail: Joi.ValidationErrorItem, isKey: (key: string) => boolean): FieldError {
  const field = detail.path.map(String).join('.') || String(detail.context?.key ?? 'body');
  const params: MessageParams = { field };
  for (const [key, value] of Object.entries(detail.context ?? {})) {
    if (typeof value === 'string' || typeof value === 'number') params[key] = value;
    // Lists of allowed values (`valids`) only: never render a rejected value, which may be any JSON.
    if (Array.isArray(value) && key !== 'value') params[key] = listParam(value);
  }
  const messageKey = isKey(detail.message)
    ? detail.message
    : isKey(`validation.${detail.type}`)
      ? `validation.${detail.type}`
      : 'error.invalid.parameter';
  return { field, messageKey, params };
}
