import { createHmac, randomUUID } from 'node:crypto';
import type { Services } from '../../config/services.js';

/** The `SESSION` cookie express-session accepts for session id `sid` (signed with SESSION_SECRET). */
export function sessionCookie(secret: string, sid: string = randomUUID()): string {
  const signature = createHmac('sha256', secret).update(sid).digest('base64').replace(/=+$/, '');
  return `SESSION=${encodeURIComponent(`s:${sid}.${signature}`)}`;
}

/** A browser session of `userId` in the app's session store, as an OpenID sign-in leaves it: its cookie. */
export async function signedInSession(services: Services, userId: number): Promise<string> {
  const sid = randomUUID();
  const expires = new Date(Date.now() + 600_000).toISOString();
  const session = { cookie: { originalMaxAge: 600_000, expires, httpOnly: true, path: '/' }, userId };
  await services.redis.set(`${services.config.redisPrefix}:sess:${sid}`, JSON.stringify(session), 'EX', 600);
  return sessionCookie(services.config.sessionSecret, sid);
}
