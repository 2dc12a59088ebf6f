import {
  CheckConstraintViolationException,
  ConnectionException,
  DeadlockException,
  DriverException,
  ForeignKeyConstraintViolationException,
  NotNullConstraintViolationException,
  UniqueConstraintViolationException,
} from '@mikro-orm/postgresql';
import {
  AppError,
  ConflictError,
  DuplicateResourceError,
  RetryLaterError,
  ServiceUnavailableError,
  ValidationError,
} from './errors.js';

/** lock_not_available: a lock not had within lock_timeout (LOCK_TIMEOUT_MS on the ORM's connections). */
const LOCK_TIMEOUT = '55P03';
/** query_canceled: the statement timeout (or an administrator) ended the statement. */
const STATEMENT_CANCELED = '57014';
/** Retry-After of a lock not had in time (its holder is expected to commit soon) and of a timed-out statement. */
const LOCK_RETRY_AFTER_SECONDS = 1;
const STATEMENT_RETRY_AFTER_SECONDS = 5;

/**
 * Data exceptions caused by input the validation let through: invalid text representation, numeric out of
 * range, NUL byte / character not in repertoire, string too long, bad or overflowing datetime.
 */
const INVALID_INPUT_SQLSTATES = new Set(['22P02', '22003', '22021', '22001', '22007', '22008', '22P05']);

/** SQLSTATE codes that mean "the database is not available right now", not "the request is wrong". */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08003',
  '08006',
  '08001',
]);
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionException) return true;
  const code = sqlState(error);
  if (code && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
  const message = error instanceof Error ? error.message : '';
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(message);
}

/**
 * A transaction that lost a deadlock (40P01) or a serialization check (40001): nothing of it was committed, and
 * running it again is the remedy (PostgreSQL §13.5). Callers retry at the transaction boundary.
 */
export function isTransactionConflict(error: unknown): boolean {
  if (error instanceof DeadlockException) return true;
  const code = sqlState(error) ?? sqlState((error as { cause?: unknown } | null)?.cause);
  return code === '40P01' || code === '40001';
}

/**
 * The one place where database failures become domain errors: unique -> 409 DUPLICATE_RESOURCE,
 * foreign key -> 409, deadlock / serialization failure (retries used up) -> 409, check / not null -> 400, a lock
 * not had in time or a statement timeout -> 503 with Retry-After, connection trouble -> 503. Returns undefined
 * for anything else.
 */
export function translateDbError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof UniqueConstraintViolationException || sqlState(error) === '23505')
    return new DuplicateResourceError('error.duplicate.resource', { cause: error });
  if (error instanceof ForeignKeyConstraintViolationException || sqlState(error) === '23503')
    return new ConflictError('error.conflict.reference', { cause: error });
  if (
    error instanceof CheckConstraintViolationException ||
    error instanceof NotNullConstraintViolationException ||
    sqlState(error) === '23514' ||
    sqlState(error) === '23502'
  )
    return new ValidationError('error.invalid.parameter', { cause: error });
  // Only reached when the retries at the transaction boundary are used up.
  if (isTransactionConflict(error)) return new ConflictError('error.transaction.conflict', { cause: error });
  if (sqlState(error) === LOCK_TIMEOUT)
    return new RetryLaterError(LOCK_RETRY_AFTER_SECONDS, 'error.lock.timeout', { cause: error });
  if (sqlState(error) === STATEMENT_CANCELED)
    return new RetryLaterError(STATEMENT_RETRY_AFTER_SECONDS, 'error.statement.timeout', { cause: error });
  if (INVALID_INPUT_SQLSTATES.has(sqlState(error) ?? ''))
    return new ValidationError('error.invalid.parameter', { cause: error });
  if (isUnavailable(error) || (error instanceof DriverException && isUnavailable(error.cause)))
    return new ServiceUnavailableError('error.database.unavailable', { cause: error });
  return undefined;
}
