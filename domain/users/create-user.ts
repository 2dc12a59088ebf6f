import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { DuplicateResourceError, ValidationError } from '../shared/errors.js';
import { hashPassword, MAX_PASSWORD_BYTES } from './passwords.js';
import { ROLES, type Role } from './roles.js';
import { User } from './user.entity.js';

export interface NewUser {
  username: string;
  /** Plain password; stored only as an argon2id hash. Omit for an account that signs in via OIDC only. */
  password?: string;
  email?: string | null;
  fullName?: string | null;
  role: Role;
}

export interface CreatedUser {
  id: number;
  username: string;
  role: Role;
}

/** Checks a new password: not empty and at most 1,024 bytes (argon2 hashes anything, so bound the work). */
export function checkPassword(password: string): void {
  if (password.length === 0) throw new ValidationError('auth.password.required');
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES)
    throw new ValidationError('auth.password.too.long');
}

/**
 * Creates a password (or OIDC-only) account. The username and e-mail are unique case-insensitively; a clash
 * is 409 `DUPLICATE_RESOURCE` with `auth.user.exists`.
 */
export async function createUser(em: EntityManager, input: NewUser): Promise<CreatedUser> {
  const username = input.username.trim();
  if (username.length === 0 || username.length > 255) throw new ValidationError('auth.username.required');
  if (!ROLES.includes(input.role)) throw new ValidationError('auth.role.invalid');
  if (input.password !== undefined) checkPassword(input.password);
  const hash = input.password === undefined ? null : await hashPassword(input.password);
  try {
    return await em.transactional(async tx => {
      const user = tx.create(User, {
        username,
        email: input.email?.trim() || null,
        passwordHash: hash,
        fullName: input.fullName ?? null,
        role: input.role,
      });
      await tx.flush();
      return { id: user.id, username, role: input.role };
    });
  } catch (error) {
    // The unique indexes on lower(username) and lower(email) close the race of two creations.
    if (error instanceof UniqueConstraintViolationException)
      throw new DuplicateResourceError('auth.user.exists', { params: { username } });
    throw error;
  }
}

/** Creates the account unless one with that username exists; true when it was created. */
export async function createUserIfAbsent(em: EntityManager, input: NewUser): Promise<boolean> {
  try {
    await createUser(em, input);
    return true;
  } catch (error) {
    if (error instanceof DuplicateResourceError) return false;
    throw error;
  }
}
