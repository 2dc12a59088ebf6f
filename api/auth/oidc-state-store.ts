import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import type OpenIDConnectStrategy from 'passport-openidconnect';

type Context = OpenIDConnectStrategy.SessionStoreContext;
type Sessions = Record<string, { state?: Context & { handle: string } } | undefined>;

/**
 * passport-openidconnect's session state store, plus one thing: the session is saved BEFORE the browser is sent
 * to the provider. express-session otherwise saves while the 302 is already on its way, so a failed save (Redis
 * away) left a login that could only end in "state not found"; now it is a 503 up front.
 */
export class SavedSessionStateStore implements Pick<OpenIDConnectStrategy.SessionStore, 'store' | 'verify'> {
  constructor(private readonly key: string) {}

  store(
    req: Request,
    ctx: Context,
    _appState: object | undefined,
    _meta: object | undefined,
    cb: OpenIDConnectStrategy.SessionStoreCallback,
  ): void {
    const handle = randomBytes(18).toString('base64url');
    const state = {
      handle,
      ...(ctx.nonce ? { nonce: ctx.nonce } : {}),
      ...(ctx.maxAge ? { maxAge: ctx.maxAge } : {}),
    };
    (req.session as unknown as Sessions)[this.key] = { state };
    req.session.save(error => cb(error ? (error as Error) : null, handle));
  }

  verify(req: Request, handle: string, cb: OpenIDConnectStrategy.SessionVerifyCallback): void {
    const sessions = req.session as unknown as Sessions;
    const state = sessions[this.key]?.state;
    // One use only: the state is gone whatever the outcome.
    delete sessions[this.key];
    if (!state)
      return cb(null, false, {
        message: 'Unable to verify authorization request state.',
        invalidState: true,
      });
    if (typeof handle !== 'string' || state.handle !== handle)
      return cb(null, false, { message: 'Invalid authorization request state.', invalidState: true });
    cb(null, { nonce: state.nonce, maxAge: state.maxAge });
  }
}
