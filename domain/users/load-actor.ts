import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from './roles.js';

export interface UserRow {
  id: number;
  username: string;
  email: string | null;
  role: Role;
}

/** Loads the current identity and role of a user (roles are never taken from a token or a session). */
export async function findUserByUsername(em: EntityManager, username: string): Promise<UserRow | undefined> {
  const rows = await em.execute<UserRow[]>(
    'select id, username, email, role from app_user where lower(username) = lower(?)',
    [username],
  );
  return rows[0];
}

export async function findUserById(em: EntityManager, id: number): Promise<UserRow | undefined> {
  const rows = await em.execute<UserRow[]>('select id, username, email, role from app_user where id = ?', [
    id,
  ]);
  return rows[0];
}
