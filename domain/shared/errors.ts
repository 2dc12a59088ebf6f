/** Error codes of the central error body (contract, "Errors"). */
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'DUPLICATE_RESOURCE'
  | 'precondition_failed'
  | 'unprocessable_entity'
  | 'too_many_requests'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'gone'
  | 'internal_server_error'
  | 'service_unavailable'
  | 'VALIDATION_ERROR';

export type MessageParams = Record<string, string | number>;

export interface FieldError {
  field: string;
  messageKey: string;
  params?: MessageParams;
  /** Position in a batch request, when the field belongs to one row of it. */
  index?: number;
}

export interface AppErrorOptions {
  params?: MessageParams;
  fieldErrors?: FieldError[];
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
  /** Data an error body may carry (e.g. unknown ids of a bulk request). */
  details?: unknown;
  cause?: unknown;
}

/**
 * The one error type of the domain: a code, an HTTP status and a message key that is translated only when
 * the response is built. Only these errors expose their message; anything else becomes a generic 500.
 */
export class AppError extends Error {
  readonly params: MessageParams;
  readonly fieldErrors: FieldError[];
  readonly headers: Record<string, string>;
  readonly details: unknown;

  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly messageKey: string,
    options: AppErrorOptions = {},
  ) {
    super(messageKey, { cause: options.cause });
    this.name = new.target.name;
    this.params = options.params ?? {};
    this.fieldErrors = options.fieldErrors ?? [];
    this.headers = options.headers ?? {};
    this.details = options.details;
  }
}

export class ValidationError extends AppError {
  constructor(messageKey = 'error.validation.failed', options: AppErrorOptions = {}) {
    super('bad_request', 400, messageKey, options);
  }
}

/** Paging bounds violations use their own, smaller body (contract, "Paging error"). */
export class PagingError extends AppError {
  constructor(messageKey: string, params: MessageParams) {
    super('bad_request', 400, messageKey, { params });
  }
}

export class UnauthorizedError extends AppError {
  constructor(messageKey = 'error.authentication.required', options: AppErrorOptions = {}) {
    super('unauthorized', 401, messageKey, options);
  }
}

export class ForbiddenError extends AppError {
  constructor(messageKey = 'error.forbidden', options: AppErrorOptions = {}) {
    super('forbidden', 403, messageKey, options);
  }
}

export class NotFoundError extends AppError {
  constructor(messageKey = 'error.not.found', options: AppErrorOptions = {}) {
    super('not_found', 404, messageKey, options);
  }
}

export class ConflictError extends AppError {
  constructor(messageKey = 'error.conflict', options: AppErrorOptions = {}) {
    super('conflict', 409, messageKey, options);
  }
}

export class DuplicateResourceError extends AppError {
  constructor(messageKey = 'error.duplicate.resource', options: AppErrorOptions = {}) {
    super('DUPLICATE_RESOURCE', 409, messageKey, options);
  }
}

export class PreconditionFailedError extends AppError {
  constructor(messageKey = 'error.precondition.failed', options: AppErrorOptions = {}) {
    super('precondition_failed', 412, messageKey, options);
  }
}

export class UnprocessableError extends AppError {
  constructor(messageKey = 'error.unprocessable', options: AppErrorOptions = {}) {
    super('unprocessable_entity', 422, messageKey, options);
  }
}

/** 415: a request body of a content type (or charset) the operation does not take. */
export class UnsupportedMediaTypeError extends AppError {
  constructor(messageKey = 'error.unsupported.media.type', options: AppErrorOptions = {}) {
    super('unsupported_media_type', 415, messageKey, options);
  }
}

/** 410: what was asked for is no longer kept (an expired change-feed cursor). */
export class GoneError extends AppError {
  constructor(messageKey = 'error.gone', options: AppErrorOptions = {}) {
    super('gone', 410, messageKey, options);
  }
}

/** `Retry-After` (whole seconds, at least 1) and the same figure as the message's `seconds` parameter. */
function retryAfter(seconds: number, params: MessageParams, options: AppErrorOptions) {
  const whole = Math.max(1, Math.ceil(seconds));
  return {
    ...options,
    headers: { ...options.headers, 'Retry-After': String(whole) },
    params: { ...params, seconds: whole },
  };
}

export class TooManyRequestsError extends AppError {
  constructor(retryAfterSeconds: number, messageKey = 'error.too.many.requests', params: MessageParams = {}) {
    super('too_many_requests', 429, messageKey, retryAfter(retryAfterSeconds, params, {}));
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(messageKey = 'error.service.unavailable', options: AppErrorOptions = {}) {
    super('service_unavailable', 503, messageKey, options);
  }
}

/** 503 that tells the client when to try again: the condition is expected to pass within seconds. */
export class RetryLaterError extends ServiceUnavailableError {
  constructor(retryAfterSeconds: number, messageKey: string, options: AppErrorOptions = {}) {
    super(messageKey, retryAfter(retryAfterSeconds, options.params ?? {}, options));
  }
}
