import { randomUUID } from 'node:crypto';
import type { Services } from '../../config/services.js';
import { hashPassword } from '../../domain/users/passwords.js';
import { issueToken } from '../../domain/users/tokens.js';
import type { Role } from '../../domain/users/roles.js';

export interface TestUser {
  id: number;
  username: string;
  password: string;
  role: Role;
  token: string;
  auth: string;
}

/** Creates a password user with a unique name and a bearer token for it. */
export async function createUser(
  services: Services,
  role: Role = 'ROLE_USER',
  prefix = 'user',
): Promise<TestUser> {
  const username = `${prefix}-${randomUUID().slice(0, 8)}`;
  const password = `Pw-${randomUUID()}`;
  const rows = await services.orm.em
    .fork()
    .execute<{ id: number }[]>(
      'insert into app_user (username, email, password_hash, full_name, role) values (?, ?, ?, ?, ?) returning id',
      [username, `${username}@example.test`, await hashPassword(password), `Test ${username}`, role],
    );
  const token = await issueToken(
    { sub: username, role },
    services.config.jwtSecret,
    services.config.jwtTtlSeconds,
  );
  return { id: rows[0].id, username, password, role, token, auth: `Bearer ${token}` };
}
