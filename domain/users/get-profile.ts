import type { EntityManager } from '@mikro-orm/postgresql';
import { UnauthorizedError } from '../shared/errors.js';
import type { Role } from './roles.js';

export interface Profile {
  email: string | null;
  fullName: string | null;
  role: 'ADMIN' | 'USER';
  pictureUrl: string | null;
}

/** The signed-in user's profile (the profile (GET /api/me)), read from the database. */
export async function getProfile(em: EntityManager, userId: number): Promise<Profile> {
  const rows = await em.execute<
    {
      email: string | null;
      username: string;
      full_name: string | null;
      role: Role;
      picture_url: string | null;
    }[]
  >('select email, username, full_name, role, picture_url from app_user where id = ?', [userId]);
  const user = rows[0];
  if (!user) throw new UnauthorizedError();
  return {
    email: user.email ?? user.username,
    fullName: user.full_name,
    role: user.role === 'ROLE_ADMIN' ? 'ADMIN' : 'USER',
    pictureUrl: user.picture_url,
  };
}
