import type { EntityManager } from '@mikro-orm/postgresql';
import { UnauthorizedError } from '../shared/errors.js';
import { verifyPassword } from './passwords.js';
import { issueToken } from './tokens.js';
import type { Role } from './roles.js';

export interface LoginSettings {
  jwtSecret: string;
  jwtTtlSeconds: number;
}

/**
 * Checks a username and password and issues a bearer token. Unknown user and wrong password take the same
 * time and end in the same 401.
 */
export async function loginWithPassword(
  em: EntityManager,
  credentials: { username: string; password: string },
  settings: LoginSettings,
): Promise<{ token: string; username: string; role: Role }> {
  const rows = await em.execute<{ username: string; role: Role; password_hash: string | null }[]>(
    'select username, role, password_hash from app_user where lower(username) = lower(?)',
    [credentials.username],
  );
  const user = rows[0];
  const valid = await verifyPassword(user?.password_hash, credentials.password);
  if (!user || !valid) throw new UnauthorizedError('auth.login.invalid');
  const token = await issueToken(
    { sub: user.username, role: user.role },
    settings.jwtSecret,
    settings.jwtTtlSeconds,
  );
  return { token, username: user.username, role: user.role };
}
