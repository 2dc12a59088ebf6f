import type { Config } from '../../config/env.js';
import { AppError } from '../../domain/shared/errors.js';
import { translateDbError } from '../../domain/shared/db-errors.js';

/**
 * Why a browser sign-in failed at the callback: the `?error=` code of `FRONTEND_URL/login` (the front end
 * shows a message for it). `unauthorized` is the contract's refusal (e-mail not allowed, user cancelled).
 */
export type LoginFailure =
  | 'unauthorized'
  | 'invalid_state'
  | 'provider_error'
  | 'login_failed'
  | 'account_conflict'
  | 'temporarily_unavailable';

/** A sign-in failure whose code is already known where it happens. */
export class LoginFailedError extends Error {
  constructor(
    readonly code: LoginFailure,
    options: { cause?: unknown } = {},
  ) {
    super(`sign-in failed: ${code}`, options);
    this.name = 'LoginFailedError';
  }
}

/** The code for any error thrown while finishing a sign-in. */
export function loginFailure(error: unknown): LoginFailure {
  if (error instanceof LoginFailedError) return error.code;
  const known = error instanceof AppError ? error : translateDbError(error);
  if (known?.status === 503) return 'temporarily_unavailable';
  if (known?.status === 409) return 'account_conflict';
  const name = (error as { name?: string } | null)?.name ?? '';
  // The provider could not be reached for the token exchange (passport-oauth2 wraps that failure).
  if (name === 'InternalOAuthError') return 'temporarily_unavailable';
  // `?error=` other than access_denied, sent back by the provider.
  if (name === 'AuthorizationError') return 'provider_error';
  return 'login_failed';
}

export const loginPageUrl = (config: Pick<Config, 'frontendUrl'>, code: LoginFailure): string =>
  `${config.frontendUrl}/login?error=${code}`;
