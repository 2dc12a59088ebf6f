import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from './roles.js';

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
 * Browser sign-in: finds the account by e-mail or creates it (username = e-mail), in one atomic statement.
 * The role is recomputed from ADMIN_EMAILS on every sign-in ("healed"); full name and picture are refreshed.
 * An e-mail outside ALLOWED_EMAILS, or one the provider marks unverified, is refused and nothing is written.
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
  // ON CONFLICT only arbitrates the e-mail index: a concurrent first sign-in may still trip the username index
  // (username = e-mail). One retry then finds the committed row through the e-mail arbiter and updates it; a
  // real username clash (a password account named like this e-mail) fails again and surfaces as 409.
  const upsert = () =>
    em.execute<{ id: number; role: Role; created: boolean }[]>(
      `insert into app_user (username, email, full_name, picture_url, role)
       values (?, ?, ?, ?, ?)
       on conflict (lower(email)) where email is not null do update
         set role = excluded.role,
             full_name = coalesce(excluded.full_name, app_user.full_name),
             picture_url = coalesce(excluded.picture_url, app_user.picture_url),
             updated_at = now()
       returning id, role, (xmax = 0) as created`,
      [email, email, fullName, picture, role],
    );
  const rows = await upsert().catch(error => {
    if (error instanceof UniqueConstraintViolationException) return upsert();
    throw error;
  });
  return { outcome: 'signed-in', userId: rows[0].id, role: rows[0].role, created: rows[0].created };
}
