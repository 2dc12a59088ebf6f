import Joi from 'joi';
import type { Services } from '../../config/services.js';
import type { RouteDefinition } from '../routing/route-definition.js';
import { createOidcLogin } from '../auth/oidc.js';
import { allowedReturnUrl } from '../auth/return-url.js';
import { endSession } from './auth.routes.js';

const returnQuery = Joi.object({
  return: Joi.string().max(2048).description('Where to send the browser afterwards (an allowed origin)'),
});

/**
 * Browser sign-in and sign-out (the sign-in routes). The OIDC routes exist only when OIDC_ISSUER_URL is set;
 * `POST /logout` always does.
 */
export const browserAuthRoutes = ({ config, logger }: Services): RouteDefinition[] => {
  const routes: RouteDefinition[] = [
    {
      method: 'post',
      path: '/logout',
      changesNoRows: true,
      summary: 'Browser logout: destroys the session, expires the cookies, redirects to the front end',
      tag: 'Auth',
      access: 'public',
      allowedInDemo: true,
      request: { query: returnQuery },
      responses: {
        302: { description: 'To `return` (allowed origins only) or FRONTEND_URL/logout-success' },
      },
      handler: async (req, res, { query }) => {
        await endSession(req, res);
        const target = allowedReturnUrl(config, query.return)?.href ?? `${config.frontendUrl}/logout-success`;
        res.redirect(302, target);
      },
    },
  ];
  if (!config.oidc.issuerUrl) return routes;

  const oidc = createOidcLogin(config, logger);
  routes.push(
    {
      method: 'get',
      path: oidc.paths.authorization,
      summary: 'Starts the browser login at the OpenID provider',
      tag: 'Auth',
      access: 'public',
      request: { query: returnQuery },
      responses: { 302: { description: 'To the OpenID provider' } },
      handler: (req, res, { query }) => oidc.start(req, res, query.return),
    },
    {
      method: 'get',
      path: oidc.paths.callback,
      summary: 'OpenID provider callback: signs the browser in',
      tag: 'Auth',
      access: 'public',
      request: {
        query: Joi.object({ code: Joi.string().max(4096), state: Joi.string().max(1024) }),
      },
      responses: {
        302: {
          description: 'To `{return or FRONTEND_URL}/auth`; refused: FRONTEND_URL/login?error=unauthorized',
        },
      },
      handler: (req, res) => oidc.callback(req, res),
    },
  );
  return routes;
};
