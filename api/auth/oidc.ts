import type { Request, Response } from 'express';
import passport from 'passport';
import OpenIDConnectStrategy from 'passport-openidconnect';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Logger } from 'pino';
import type { Config } from '../../config/env.js';
import { findOrProvisionUser } from '../../domain/users/find-or-provision-user.js';
import { ServiceUnavailableError, UnauthorizedError } from '../../domain/shared/errors.js';
import { LoginFailedError, loginFailure, loginPageUrl } from './login-failure.js';
import { allowedReturnUrl, returnBase } from './return-url.js';
import { SavedSessionStateStore } from './oidc-state-store.js';

/** The paths the reference client navigates to (the sign-in redirect, the sign-in callback). */
export const oidcPaths = (providerId: string) => ({
  authorization: `/oauth2/authorization/${providerId}`,
  callback: `/login/oauth2/code/${providerId}`,
});

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint?: string;
  jwks_uri: string;
}

const STRATEGY = 'oidc';
const DISCOVERY_TIMEOUT_MS = 5000;

/** What the verify step hands to the callback route. */
interface SignedIn {
  userId: number;
}
interface Refused {
  refused: true;
}

async function discover(issuer: string): Promise<Discovery> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const res = await fetch(url, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`OIDC discovery answered ${res.status}`);
  const doc = (await res.json()) as Discovery;
  // OpenID Connect Discovery §4.3: the issuer in the document must be exactly the configured one.
  if (doc.issuer !== issuer) throw new Error(`OIDC discovery issuer mismatch: ${doc.issuer}`);
  for (const key of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const)
    if (typeof doc[key] !== 'string') throw new Error(`OIDC discovery lacks ${key}`);
  return doc;
}

const asString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined;

/**
 * Browser login with passport + passport-openidconnect against OIDC_ISSUER_URL (discovery, lazily on the
 * first login, retried after a failure). The ID token's signature is checked against the provider's JWKS
 * (passport-openidconnect checks iss, aud, azp, exp and nonce but not the signature). Users are provisioned
 * by e-mail; the session id is regenerated at login (session fixation) and the session keeps only `userId`.
 */
export function createOidcLogin(config: Config, logger: Logger) {
  const { issuerUrl, clientId, clientSecret, providerId } = config.oidc;
  if (!issuerUrl || !clientId) throw new Error('OIDC is not configured');
  const paths = oidcPaths(providerId);
  const callbackURL = `${config.publicUrl}${paths.callback}`;
  const authenticator = new passport.Passport();
  let ready: Promise<void> | undefined;

  const setUp = async () => {
    const doc = await discover(issuerUrl);
    const jwks = createRemoteJWKSet(new URL(doc.jwks_uri));
    const strategy = new OpenIDConnectStrategy(
      {
        issuer: doc.issuer,
        authorizationURL: doc.authorization_endpoint,
        tokenURL: doc.token_endpoint,
        userInfoURL: doc.userinfo_endpoint ?? `${doc.issuer}/userinfo`,
        clientID: clientId,
        clientSecret: clientSecret ?? '',
        callbackURL,
        scope: ['profile', 'email'],
        nonce: 'on',
        passReqToCallback: true,
        store: new SavedSessionStateStore(`oidc:${providerId}`),
      },
      (
        req: Request,
        _issuer: string,
        _profile: OpenIDConnectStrategy.Profile,
        _context: object,
        idToken: string | object,
        done: OpenIDConnectStrategy.VerifyCallback,
      ) => {
        const verify = async (): Promise<SignedIn | Refused> => {
          let claims: JWTPayload;
          try {
            ({ payload: claims } = await jwtVerify(typeof idToken === 'string' ? idToken : '', jwks, {
              issuer: doc.issuer,
              audience: clientId,
            }));
          } catch (error) {
            throw new UnauthorizedError('auth.oidc.failed', { cause: error });
          }
          const email = asString(claims.email);
          if (!email) return { refused: true };
          const result = await findOrProvisionUser(
            req.em,
            {
              email,
              emailVerified: typeof claims.email_verified === 'boolean' ? claims.email_verified : undefined,
              name: asString(claims.name),
              picture: asString(claims.picture),
            },
            { adminEmails: config.adminEmails, allowedEmails: config.allowedEmails },
          );
          if (result.outcome === 'refused') return { refused: true };
          return { userId: result.userId };
        };
        verify().then(
          outcome =>
            'refused' in outcome ? done(null, undefined, outcome) : done(null, outcome as Express.User),
          (error: unknown) => done(error as Error),
        );
      },
    );
    authenticator.use(STRATEGY, strategy);
  };

  const ensureReady = async () => {
    ready ??= setUp().catch((error: unknown) => {
      ready = undefined;
      logger.warn({ err: error }, 'OIDC provider discovery failed');
      throw new ServiceUnavailableError('auth.oidc.unavailable', { cause: error });
    });
    await ready;
  };

  /** The sign-in redirect: remember an allowed `return`, then redirect to the provider (state and nonce live in the session). */
  const start = async (req: Request, res: Response, returnParam: unknown) => {
    await ensureReady();
    const returnUrl = allowedReturnUrl(config, returnParam);
    if (returnUrl) req.session.returnTo = returnUrl.href;
    else delete req.session.returnTo;
    // The strategy answers the redirect itself; the promise settles when the response is sent.
    await new Promise<void>((resolve, reject) => {
      res.once('finish', () => resolve());
      res.once('close', () => resolve());
      authenticator.authenticate(STRATEGY, { session: false })(req, res, (error?: unknown) =>
        // The only failure left here is saving the session (state and nonce) before the redirect.
        reject(new ServiceUnavailableError('error.session.unavailable', { cause: error })),
      );
    });
  };

  /** The provider's answer at the callback: the signed-in user, or a failure with its code. */
  const authenticateCallback = async (req: Request, res: Response): Promise<SignedIn> => {
    // Without a code (or a provider error) the strategy would start a new login: not on the callback path.
    if (typeof req.query.code !== 'string' && typeof req.query.error !== 'string')
      throw new LoginFailedError('login_failed');
    await ensureReady();
    return new Promise<SignedIn>((resolve, reject) => {
      authenticator.authenticate(
        STRATEGY,
        { session: false },
        (error: unknown, user: SignedIn | false | undefined, info: unknown) => {
          if (error) return reject(error instanceof Error ? error : new Error('OIDC login failed'));
          if (user) return resolve(user);
          const infos = Array.isArray(info) ? info : [info];
          const has = (key: 'refused' | 'invalidState') =>
            infos.some(i => (i as Record<string, unknown> | undefined)?.[key] === true);
          // The provider said no (access_denied) or the user is not allowed: the contract's refusal.
          if (has('refused') || typeof req.query.error === 'string')
            return reject(new LoginFailedError('unauthorized'));
          // No state in this session (cookie lost, expired, already used) or another one than sent.
          if (has('invalidState')) return reject(new LoginFailedError('invalid_state'));
          // ID token for someone else, nonce mismatch, expired.
          reject(new LoginFailedError('login_failed', { cause: info }));
        },
      )(req, res, reject);
    });
  };

  const sessionStep = (step: (done: (error?: unknown) => void) => void) =>
    new Promise<void>((resolve, reject) =>
      step(error =>
        error
          ? reject(new ServiceUnavailableError('error.session.unavailable', { cause: error }))
          : resolve(),
      ),
    );

  /**
   * The sign-in callback: finish the login; 302 to `{return or FRONTEND_URL}/auth`. Every failure (state missing or expired,
   * refused e-mail, provider error or outage) sends the browser to `FRONTEND_URL/login?error=<code>`: a
   * browser navigating here never gets a JSON error page.
   */
  const callback = async (req: Request, res: Response) => {
    try {
      const user = await authenticateCallback(req, res);
      const target = `${returnBase(config, req.session.returnTo)}/auth`;
      // Session fixation: a new id (the old session is destroyed), then only the user id is kept.
      await sessionStep(done => req.session.regenerate(done));
      req.session.userId = user.userId;
      await sessionStep(done => req.session.save(done));
      res.redirect(302, target);
    } catch (error) {
      const code = loginFailure(error);
      req.log.warn({ err: error, loginError: code }, 'browser sign-in failed');
      res.redirect(302, loginPageUrl(config, code));
    }
  };

  return { paths, start, callback };
}
