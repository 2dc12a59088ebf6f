export const ROLES = ['ROLE_USER', 'ROLE_ADMIN'] as const;
export type Role = (typeof ROLES)[number];

/** Authorities granted by a role: an ADMIN is also a USER. Sorted, as `GET /api/me/authorities` returns them. */
export function authoritiesOf(role: Role): Role[] {
  return role === 'ROLE_ADMIN' ? ['ROLE_ADMIN', 'ROLE_USER'] : ['ROLE_USER'];
}
