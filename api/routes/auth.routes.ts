import type { Request, Response } from 'express';
import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { envelope, envelopeSchema } from '../presenters/envelope.js';
import { loginWithPassword } from '../../domain/users/login-with-password.js';
import { getProfile } from '../../domain/users/get-profile.js';
import { authoritiesOf } from '../../domain/users/roles.js';
import { MAX_PASSWORD_BYTES } from '../../domain/users/passwords.js';
import { LoginLimiter } from '../auth/login-limiter.js';
import { ServiceUnavailableError } from '../../domain/shared/errors.js';
import { LEGACY_SESSION_COOKIE, SESSION_COOKIE, SESSION_COOKIE_ATTRIBUTES } from '../auth/session.js';

const loginBody = Joi.object({
  username: Joi.string().trim().min(1).max(255).required().messages({
    'any.required': 'auth.username.required',
    'string.empty': 'auth.username.required',
    'string.base': 'auth.username.required',
  }),
  password: Joi.string().min(1).max(MAX_PASSWORD_BYTES, 'utf8').required().messages({
    'any.required': 'auth.password.required',
    'string.empty': 'auth.password.required',
    'string.base': 'auth.password.required',
    'string.max': 'auth.password.too.long',
  }),
});

const profileSchema = Joi.object({
  email: Joi.string().allow(null).required(),
  fullName: Joi.string().allow(null).required(),
  role: Joi.string().valid('ADMIN', 'USER').required(),
  pictureUrl: Joi.string().allow(null).required(),
});

/**
 * Ends the server-side session and expires both session cookie names with every attribute. The session store
 * away: 503, as when the session is loaded (nothing is expired then: the session may still be there).
 */
export async function endSession(req: Request, res: Response): Promise<void> {
  if (req.session)
    await new Promise<void>((resolve, reject) =>
      req.session.destroy((e: unknown) =>
        e ? reject(new ServiceUnavailableError('error.session.unavailable', { cause: e })) : resolve(),
      ),
    );
  for (const name of [SESSION_COOKIE, LEGACY_SESSION_COOKIE])
    res.cookie(name, '', { ...SESSION_COOKIE_ATTRIBUTES, maxAge: 0 });
}

export const authRoutes = ({ config, redis }: Services) => {
  const limiter = new LoginLimiter(redis, config);
  return defineRoutes([
    {
      method: 'post',
      path: '/api/auth/login',
      changesNoRows: true,
      summary: 'Password login; returns an HS256 bearer token (429 with Retry-After after too many failures)',
      tag: 'Auth',
      access: 'public',
      refusals: {
        401: { when: 'Unknown user or wrong password', messageKey: 'auth.login.invalid' },
        429: {
          when: 'Too many failed logins for this user or address (Retry-After)',
          messageKey: 'error.too.many.requests',
        },
      },
      allowedInDemo: true,
      errorStyle: 'product',
      request: { body: loginBody },
      responses: { 200: { description: 'Token issued', schema: envelopeSchema(Joi.string()) } },
      handler: async (req, res, { body }) => {
        const { token } = await limiter.attempt(body.username, req.ip ?? 'unknown', () =>
          loginWithPassword(req.em, body, config),
        );
        res.json(envelope(req.t('auth.login.success'), token));
      },
    },
    {
      method: 'get',
      path: '/api/me',
      summary: 'Profile of the signed-in user',
      tag: 'Auth',
      access: 'auth',
      responses: { 200: { description: 'Profile', schema: profileSchema } },
      handler: async (req, res) => res.json(await getProfile(req.em, req.actor!.userId)),
    },
    {
      method: 'get',
      path: '/api/me/authorities',
      summary: 'Sorted authorities of the signed-in user',
      tag: 'Auth',
      access: 'auth',
      responses: { 200: { description: 'Authorities', schema: Joi.array().items(Joi.string()) } },
      handler: (req, res) => res.json(authoritiesOf(req.actor!.role)),
    },
    {
      method: 'post',
      path: '/api/auth/logout',
      changesNoRows: true,
      summary: 'API logout: destroys the session and expires the cookies',
      tag: 'Auth',
      access: 'auth',
      allowedInDemo: true,
      responses: { 204: { description: 'Logged out' } },
      handler: async (req, res) => {
        await endSession(req, res);
        res.status(204).end();
      },
    },
  ]);
};
