import { LockMode, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { lowerEquals } from '../shared/lower-equals.js';
import { transactionTime } from '../shared/database-time.js';
import type { Role } from './roles.js';
import { User } from './user.entity.js';

/** What the identity provider says about the person (ID token claims). */
export interface IdentityClaims {
  email: string;
  emailVerified?: boolean;
  name?: string | null;
  picture?: string | null;
}

export interface ProvisioningPolicy {
  /** Lower-case e-mails that get ROLE_ADMIN. */
  adminEmails: readonly string[];
  /** Lower-case e-mails or `@domain` entries allowed to sign in; empty = anyone the provider authenticates. */
  allowedEmails: readonly string[];
}

export type ProvisioningResult =
  { outcome: 'signed-in'; userId: number; role: Role; created: boolean } | { outcome: 'refused' };

/** Whether an e-mail passes the allow-list (`user@example.com` or `@example.com` entries, case-insensitive). */
export function isEmailAllowed(email: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const normalized = email.trim().toLowerCase();
  const domain = normalized.slice(normalized.lastIndexOf('@'));
  return allowed.some(entry => (entry.startsWith('@') ? entry === domain : entry === normalized));
}

/**
 * Browser sign-in: finds the account by e-mail (its row locked) or creates it (username = e-mail), in one unit of
 * work. The role is recomputed from ADMIN_EMAILS on every sign-in ("healed"); full name and picture are
 * refreshed when the provider sends them; every sign-in is a write of the row (updated_at). An e-mail outside
 * ALLOWED_EMAILS, or one the provider marks unverified, is refused and nothing is written.
 */
export async function findOrProvisionUser(
  em: EntityManager,
  claims: IdentityClaims,
  policy: ProvisioningPolicy,
): Promise<ProvisioningResult> {
  const email = claims.email.trim();
  if (!email.includes('@') || email.length > 320) return { outcome: 'refused' };
  if (claims.emailVerified === false) return { outcome: 'refused' };
  if (!isEmailAllowed(email, policy.allowedEmails)) return { outcome: 'refused' };
  const role: Role = policy.adminEmails.includes(email.toLowerCase()) ? 'ROLE_ADMIN' : 'ROLE_USER';
  const fullName = claims.name?.slice(0, 255) || null;
  const picture = claims.picture || null;
  const provision = () =>
    em.transactional(async tx => {
      const found = await tx.findOne(User, lowerEquals('email', email), {
        lockMode: LockMode.PESSIMISTIC_WRITE,
        refresh: true,
      });
      const user =
        found ??
        tx.create(User, { username: email, email, fullName, pictureUrl: picture, role, passwordHash: null });
      if (found) {
        tx.assign(found, {
          role,
          fullName: fullName ?? found.fullName,
          pictureUrl: picture ?? found.pictureUrl,
        });
        found.updatedAt = transactionTime();
      }
      await tx.flush();
      return { outcome: 'signed-in' as const, userId: user.id, role, created: !found };
    });
  // The unique indexes close the race of two first sign-ins: the loser's retry finds the committed row and
  // updates it. A real username clash (a password account named like this e-mail) fails again and surfaces
  // as 409.
  return provision().catch(error => {
    if (error instanceof UniqueConstraintViolationException) return provision();
    throw error;
  });
}
