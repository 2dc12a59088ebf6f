import type { EntityManager } from '@mikro-orm/postgresql';
import { hashPassword } from './passwords.js';
import type { Role } from './roles.js';

/** The demo accounts of the product contract. Never created in production (the caller refuses). */
export const DEMO_USERS: readonly { username: string; password: string; role: Role }[] = [
  { username: 'admin', password: 'admin123', role: 'ROLE_ADMIN' },
  { username: 'user', password: 'user123', role: 'ROLE_USER' },
];

/** Creates the demo accounts that do not exist yet (argon2id hashes); existing accounts are left as they are. */
export async function ensureDemoUsers(em: EntityManager): Promise<number> {
  let created = 0;
  for (const demo of DEMO_USERS) {
    const existing = await em.execute<{ id: number }[]>(
      'select id from app_user where lower(username) = lower(?)',
      [demo.username],
    );
    if (existing.length > 0) continue;
    const rows = await em.execute<{ id: number }[]>(
      `insert into app_user (username, password_hash, full_name, role) values (?, ?, ?, ?)
       on conflict ((lower(username))) do nothing returning id`,
      [demo.username, await hashPassword(demo.password), `Demo ${demo.username}`, demo.role],
    );
    created += rows.length;
  }
  return created;
}
