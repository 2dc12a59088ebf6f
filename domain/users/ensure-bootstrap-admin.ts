import type { EntityManager } from '@mikro-orm/postgresql';
import { createUserIfAbsent } from './create-user.js';

/**
 * BOOTSTRAP_ADMIN_USERNAME / BOOTSTRAP_ADMIN_PASSWORD: creates the first password admin at start when no
 * account has that username. An existing account is left untouched (its password is never overwritten).
 */
export async function ensureBootstrapAdmin(
  em: EntityManager,
  admin: { username: string; password: string } | undefined,
): Promise<boolean> {
  if (!admin) return false;
  return createUserIfAbsent(em, { username: admin.username, password: admin.password, role: 'ROLE_ADMIN' });
}
