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
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: [ALGORITHM],
      requiredClaims: ['exp', 'sub'],
      clockTolerance: 5,
    });
    if (typeof payload.sub !== 'string' || payload.sub.length === 0)
      throw new UnauthorizedError('error.token.invalid');
    return { sub: payload.sub };
  } catch (error) {
    if (error instanceof UnauthorizedError) throw error;
    const key = error instanceof joseErrors.JWTExpired ? 'error.token.expired' : 'error.token.invalid';
    throw new UnauthorizedError(key);
  }
}
