import type Joi from 'joi';
import type { ErrorCode } from '../../domain/shared/errors.js';
import type { RouteDefinition } from '../routing/route-definition.js';
import { isWrite } from '../middleware/authorize.js';
import { takesIdempotencyKey } from '../routing/write-handler.js';

/** One error status an operation can answer: why, the error code and message key of its example. */
export interface ErrorStatus {
  status: number;
  when: string;
  error: ErrorCode;
  messageKey: string;
  /** The answer carries Retry-After. */
  retryAfter?: boolean;
  /** A 400 may be the smaller paging body (the route reads `page`, `size` or a cursor). */
  paging?: boolean;
}

const CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'gone',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  428: 'precondition_failed',
  429: 'too_many_requests',
  503: 'service_unavailable',
};

const keysOf = (schema: Joi.ObjectSchema | undefined) =>
  (schema?.describe().keys ?? {}) as Record<string, { flags?: { only?: boolean } }>;

/** A path parameter naming something that may not exist (an id), not one of a fixed set of values. */
const namesAResource = (route: RouteDefinition) =>
  Object.values(keysOf(route.request?.params)).some(key => !key.flags?.only);

const readsPages = (route: RouteDefinition) =>
  Object.keys(keysOf(route.request?.query)).some(name => ['page', 'size', 'cursor'].includes(name));

/**
 * Every error status an operation can answer, derived from its route definition (the same one that drives
 * authentication, validation and dispatch), then the refusals the route declares for its use case:
 * - 400 always: a NUL (`%00`) in the URL is refused on every route; and the route's params, query or body;
 * - 401 unless public; 403 for ADMIN routes and for every write (read-only demo mode, a cookie write from
 *   an untrusted origin);
 * - 404 when the path names a resource (an id), checked before the query and body;
 * - 413 and 415 for a write (a JSON body, or the upload's own types and bound); 409 for a write that changes
 *   rows (a conflict beyond the retries);
 * - 409 and 422 for a write that takes an `Idempotency-Key` (the same key in flight, or reused for another
 *   request);
 * - 429 for a counted stream (STREAMS_PER_USER);
 * - 503 always: the database (or the session store) is away, a stream finds no connection, a write waits
 *   longer than LOCK_TIMEOUT_MS for a row lock.
 */
export function errorStatuses(route: RouteDefinition): ErrorStatus[] {
  const write = isWrite(route.method);
  const result = new Map<number, ErrorStatus>();
  // A later reason for the same status comes first in its description and gives the example (it is the
  // more specific one: the use case's own refusal before the one every write shares).
  const add = (status: number, when: string, messageKey: string, extra: Partial<ErrorStatus> = {}) => {
    const before = result.get(status);
    result.set(status, {
      status,
      when: before ? `${when}; or: ${before.when}` : when,
      error: CODES[status] ?? 'bad_request',
      messageKey,
      retryAfter: extra.retryAfter ?? before?.retryAfter,
      paging: extra.paging ?? before?.paging,
    });
  };
  add(
    400,
    'Invalid input: a path, query or body value the operation refuses (fieldErrors name them)',
    'error.validation.failed',
    {
      paging: readsPages(route),
    },
  );
  if (route.access !== 'public')
    add(
      401,
      'No (valid) authentication: a bearer token or a signed-in session',
      'error.authentication.required',
    );
  if (route.access === 'admin' || write)
    add(
      403,
      route.access === 'admin'
        ? 'The caller is not an ADMIN (or the demo is read-only, or a cookie write came from an untrusted origin)'
        : 'The demo is read-only, or a cookie write came from an untrusted origin',
      route.access === 'admin' ? 'error.forbidden' : 'error.demo.readonly',
    );
  if (namesAResource(route) && !route.absentReadsEmpty)
    add(404, 'The resource the path names does not exist', 'error.not.found');
  if (write) {
    const upload = route.request?.upload;
    add(
      413,
      upload ? 'The uploaded file is larger than the import bound' : 'The JSON body is larger than 1 MB',
      upload ? 'csv.import.too.large' : 'error.payload.too.large',
    );
    add(
      415,
      upload
        ? `The body is none of ${upload.contentTypes.join(', ')}`
        : 'The body is not application/json (or its charset is not UTF-8 or UTF-16)',
      upload ? 'csv.import.content.type' : 'error.unsupported.media.type',
    );
  }
  if (write && !route.changesNoRows)
    add(
      409,
      'A concurrent change conflicted with this one (a deadlock or serialization failure) beyond the retries',
      'error.transaction.conflict',
    );
  if (write && takesIdempotencyKey(route)) {
    add(409, 'A request with the same Idempotency-Key is still running', 'error.idempotency.in.progress');
    add(422, 'The Idempotency-Key was used before for a different request', 'error.idempotency.key.reused');
  }
  if (route.stream === 'counted')
    add(429, 'Too many streams of this user at once (STREAMS_PER_USER)', 'error.too.many.streams', {
      retryAfter: true,
    });
  if (!route.sessionless)
    add(
      503,
      route.stream
        ? 'No database connection is free for the stream (or no disk room to spool it), or the database is away'
        : write
          ? 'A row lock was not had within LOCK_TIMEOUT_MS, the statement timed out, or the database is away'
          : 'The database (or the session store) is away, or the statement timed out',
      route.stream ? 'error.streams.busy' : write ? 'error.lock.timeout' : 'error.database.unavailable',
      { retryAfter: route.stream !== undefined || write },
    );
  // The use case's own refusals, in the same list.
  for (const [status, refusal] of Object.entries(route.refusals ?? {}))
    add(Number(status), refusal.when, refusal.messageKey, {
      retryAfter: Number(status) === 429 || undefined,
    });
  return [...result.values()].sort((a, b) => a.status - b.status);
}
