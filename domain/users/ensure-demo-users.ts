import type { EntityManager } from '@mikro-orm/postgresql';
import { createUserIfAbsent } from './create-user.js';

export const DEMO_USERS = [
  { username: 'admin', password: 'admin123', role: 'ROLE_ADMIN', fullName: 'Demo Admin' },
  { username: 'user', password: 'user123', role: 'ROLE_USER', fullName: 'Demo User' },
] as const;

/**
 * The demo accounts `admin`/`admin123` and `user`/`user123` (demo seed only). Refuses in production: well-known
 * passwords must never exist there. Returns the usernames that were created.
 */
export async function ensureDemoUsers(em: EntityManager, nodeEnv: string): Promise<string[]> {
  if (nodeEnv === 'production') throw new Error('demo users are never created when NODE_ENV=production');
  const created: string[] = [];
  for (const user of DEMO_USERS) {
    if (await createUserIfAbsent(em, { ...user })) created.push(user.username);
  }
  return created;
}
