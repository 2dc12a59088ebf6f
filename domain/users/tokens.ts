import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { UnauthorizedError } from '../shared/errors.js';
import type { Role } from './roles.js';

const ALGORITHM = 'HS256';

export interface TokenClaims {
  sub: string;
  role: Role;
}

const keyOf = (secret: string) => new TextEncoder().encode(secret);

/** Issues an HS256 JWT: `sub` = username, `role`, `iat`, `exp` = iat + ttl. */
export async function issueToken(claims: TokenClaims, secret: string, ttlSeconds: number): Promise<string> {
  return new SignJWT({ role: claims.role })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(keyOf(secret));
}

/**
 * Verifies a token with the algorithm pinned to HS256 and `exp` required: `alg: none`, any other algorithm,
 * a bad signature, a missing or past `exp`, or a future `nbf` all end in 401.
 */
export async function verifyToken(token: string, secret: string): Promise<{ sub: string }> {
  const { sub } = await verifyTokenClaims(token, secret);
  return { sub };
}

async function verifyTokenClaims(token: string, secret: string): Promise<{ sub: string; exp: number }> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: [ALGORITHM],
      requiredClaims: ['exp', 'sub'],
      clockTolerance: 5,
    });
    if (typeof payload.sub !== 'string' || payload.sub.length === 0)
      throw new UnauthorizedError('error.token.invalid');
    return { sub: payload.sub, exp: payload.exp! };
  } catch (error) {
    if (error instanceof UnauthorizedError) throw error;
    const key = error instanceof joseErrors.JWTExpired ? 'error.token.expired' : 'error.token.invalid';
    throw new UnauthorizedError(key);
  }
}

const VERIFIED_CACHE_MAX = 10000;
const CLOCK_TOLERANCE_MS = 5000;

/**
 * {@link verifyToken} with the tokens it accepted remembered until their `exp` (a verified token stays valid
 * until then; the account behind it is checked separately on every request). Rejections are never cached.
 * Bounded: the memory is cleared when it holds VERIFIED_CACHE_MAX tokens.
 */
export function cachedTokenVerifier(secret: string): CachedTokenVerifier {
  const verified = new Map<string, { sub: string; expiresAt: number }>();
  const cached = (token: string) => {
    const hit = verified.get(token);
    if (hit === undefined) return undefined;
    if (Date.now() <= hit.expiresAt) return hit.sub;
    verified.delete(token);
    return undefined;
  };
  const verify = async (token: string) => {
    const sub = cached(token);
    if (sub !== undefined) return { sub };
    const claims = await verifyTokenClaims(token, secret);
    if (verified.size >= VERIFIED_CACHE_MAX) verified.clear();
    verified.set(token, { sub: claims.sub, expiresAt: claims.exp * 1000 + CLOCK_TOLERANCE_MS });
    return { sub: claims.sub };
  };
  return Object.assign(verify, { cached });
}

/** Verifies a token (remembered until its `exp`); `cached` answers from memory only, without waiting. */
export type CachedTokenVerifier = ((token: string) => Promise<{ sub: string }>) & {
  cached(token: string): string | undefined;
};
