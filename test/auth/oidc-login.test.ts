import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { OTHER_CLIENT_ID, PROVIDER_ID, signIn, startOidcSetup, type OidcSetup } from '../support/oidc.js';

const FRONT = 'https://front.example';
const unique = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.test`;

/** Issue 13: a sign-in that fails at the callback lands on the front end's login page, never on JSON. */
function expectLoginPage(res: Response, code: string) {
  expect(res.status).to.equal(302);
  expect(res.headers.get('location')).to.equal(`${FRONT}/login?error=${code}`);
}

describe('OIDC browser login (real local oidc-provider)', () => {
  let setup: OidcSetup;
  const adminEmail = unique('boss');

  before(async () => {
    setup = await startOidcSetup({
      ADMIN_EMAILS: `someone@else.test, ${adminEmail.toUpperCase()}`,
      CORS_ORIGINS: `${FRONT},https://app.example`,
    });
  });
  after(async () => setup?.close());

  const userRow = async (email: string) =>
    (
      await setup.app.services.orm.em
        .fork()
        .execute<
          { username: string; role: string; full_name: string | null; password_hash: string | null }[]
        >('select username, role, full_name, password_hash from app_user where lower(email) = lower(?)', [
          email,
        ])
    )[0];
  const host = () => new URL(setup.appUrl).hostname;

  it('When a new user signs in, then the browser lands on FRONTEND_URL/auth with a working session', async () => {
    const browser = setup.browser();
    const email = unique('new');
    const result = await signIn(setup, browser, email);
    expect(result.landedOn).to.equal(`${FRONT}/auth`);
    const me = await browser.request(`${setup.appUrl}/api/me`);
    expect(me.status).to.equal(200);
    expect(await me.json()).to.deep.equal({ email, fullName: email, role: 'USER', pictureUrl: null });
    const authorities = await browser.request(`${setup.appUrl}/api/me/authorities`);
    expect(await authorities.json()).to.deep.equal(['ROLE_USER']);
    expect(await userRow(email)).to.include({ username: email, role: 'ROLE_USER', password_hash: null });
  });

  it('When OIDC is configured, then its routes are in the OpenAPI document (public, 302)', () => {
    const paths = setup.app.openapi.paths as Record<
      string,
      Record<string, { responses: object; 'x-access': string }>
    >;
    for (const [path, method] of [
      [`/oauth2/authorization/${PROVIDER_ID}`, 'get'],
      [`/login/oauth2/code/${PROVIDER_ID}`, 'get'],
      ['/logout', 'post'],
    ]) {
      expect(paths[path]?.[method], path).to.be.an('object');
      expect(paths[path][method]['x-access']).to.equal('public');
      expect(paths[path][method].responses).to.have.property('302');
    }
  });

  it('When the session cookie is set, then it is HttpOnly, Secure, SameSite=None, Path=/', async () => {
    const browser = setup.browser();
    await signIn(setup, browser, unique('cookie'));
    const session = browser.setCookies.filter(c => c.startsWith('SESSION='));
    expect(session.length).to.be.greaterThan(0);
    for (const cookie of session) {
      expect(cookie).to.match(/; Path=\//);
      expect(cookie).to.match(/; HttpOnly/i);
      expect(cookie).to.match(/; Secure/i);
      expect(cookie).to.match(/; SameSite=None/i);
    }
  });

  it('When an e-mail listed in ADMIN_EMAILS signs in, then ROLE_ADMIN; the role is healed at every login', async () => {
    const browser = setup.browser();
    await signIn(setup, browser, adminEmail);
    const me = await browser.request(`${setup.appUrl}/api/me`);
    expect(await me.json()).to.include({ email: adminEmail, role: 'ADMIN' });
    const authorities = await browser.request(`${setup.appUrl}/api/me/authorities`);
    expect(await authorities.json()).to.deep.equal(['ROLE_ADMIN', 'ROLE_USER']);

    // Someone demoted the account by hand; the next login restores what ADMIN_EMAILS says.
    await setup.app.services.orm.em
      .fork()
      .execute(`update app_user set role = 'ROLE_USER' where lower(email) = lower(?)`, [adminEmail]);
    const again = setup.browser();
    await signIn(setup, again, adminEmail);
    expect((await userRow(adminEmail)).role).to.equal('ROLE_ADMIN');
    const count = await setup.app.services.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from app_user where lower(email) = lower(?)', [
        adminEmail,
      ]);
    expect(Number(count[0].n)).to.equal(1);
  });

  it('When the provider sends name and picture, then the profile shows them', async () => {
    const email = unique('pic');
    const local = await startOidcSetup({}, [
      { login: 'pic', email, name: 'Pia Picture', picture: 'https://img.example/p.png' },
    ]);
    try {
      const browser = local.browser();
      await signIn(local, browser, 'pic');
      const me = await browser.request(`${local.appUrl}/api/me`);
      expect(await me.json()).to.deep.equal({
        email,
        fullName: 'Pia Picture',
        role: 'USER',
        pictureUrl: 'https://img.example/p.png',
      });
    } finally {
      await local.close();
    }
  });

  it('When the session id is captured before login, then it changes at login and the old id is useless', async () => {
    const browser = setup.browser();
    const result = await signIn(setup, browser, unique('fixation'));
    expect(result.preLoginSession, 'a session is created for state and nonce').to.be.a('string');
    expect(result.session).to.be.a('string');
    expect(result.session).to.not.equal(result.preLoginSession);
    const attacker = setup.browser();
    attacker.setCookie(host(), 'SESSION', result.preLoginSession!);
    expect((await attacker.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
    expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(200);
  });

  it('When an allowed ?return= is given, then the browser lands there; a foreign one is ignored', async () => {
    const allowed = setup.browser();
    const ok = await signIn(
      setup,
      allowed,
      unique('ret'),
      `?return=${encodeURIComponent('https://app.example/')}`,
    );
    expect(ok.landedOn).to.equal('https://app.example/auth');
    for (const evil of [
      'https://evil.example',
      'https://front.example.evil.com',
      'https://front.example@evil.com',
      '//evil.example',
      'javascript:alert(1)',
    ]) {
      const browser = setup.browser();
      const res = await signIn(setup, browser, unique('evil'), `?return=${encodeURIComponent(evil)}`);
      expect(res.landedOn, evil).to.equal(`${FRONT}/auth`);
    }
  });

  it('When the API logout is called, then the session is gone server-side and both cookies expire', async () => {
    const browser = setup.browser();
    const { session } = await signIn(setup, browser, unique('logout'));
    const res = await browser.request(`${setup.appUrl}/api/auth/logout`, {
      method: 'POST',
      headers: { origin: FRONT },
    });
    expect(res.status).to.equal(204);
    const cookies = res.headers.getSetCookie();
    for (const name of ['SESSION', 'JSESSIONID']) {
      const cookie = cookies.find(c => c.startsWith(`${name}=`));
      expect(cookie, name).to.be.a('string');
      expect(cookie).to.match(/; Max-Age=0/);
      expect(cookie).to.match(/; Path=\//);
      expect(cookie).to.match(/; HttpOnly/);
      expect(cookie).to.match(/; Secure/);
      expect(cookie).to.match(/; SameSite=None/);
    }
    const replay = setup.browser();
    replay.setCookie(host(), 'SESSION', session!);
    expect((await replay.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
    const keys = await setup.app.services.redis.keys(`${setup.app.services.config.redisPrefix}:sess:*`);
    const sid = decodeURIComponent(session!).replace(/^s:/, '').split('.')[0];
    expect(keys).to.not.include(`${setup.app.services.config.redisPrefix}:sess:${sid}`);
  });

  it('When the browser logout is posted, then 302 to logout-success (or an allowed return) and the session is gone', async () => {
    const browser = setup.browser();
    const { session } = await signIn(setup, browser, unique('blogout'));
    const res = await browser.request(`${setup.appUrl}/logout`, {
      method: 'POST',
      headers: { origin: FRONT },
    });
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal(`${FRONT}/logout-success`);
    expect(res.headers.getSetCookie().some(c => /^SESSION=;.*Max-Age=0/.test(c))).to.equal(true);
    const replay = setup.browser();
    replay.setCookie(host(), 'SESSION', session!);
    expect((await replay.request(`${setup.appUrl}/api/me`)).status).to.equal(401);

    const other = setup.browser();
    await signIn(setup, other, unique('blogout2'));
    const back = await other.request(
      `${setup.appUrl}/logout?return=${encodeURIComponent('https://app.example/bye')}`,
      {
        method: 'POST',
        headers: { origin: FRONT },
      },
    );
    expect(back.headers.get('location')).to.equal('https://app.example/bye');
    const evil = await other.request(
      `${setup.appUrl}/logout?return=${encodeURIComponent('https://evil.example/')}`,
      {
        method: 'POST',
        headers: { origin: FRONT },
      },
    );
    expect(evil.headers.get('location')).to.equal(`${FRONT}/logout-success`);
  });

  it('When the browser logout comes from a foreign origin with the cookie, then 403 and the session survives', async () => {
    const browser = setup.browser();
    await signIn(setup, browser, unique('csrf-logout'));
    const res = await browser.request(`${setup.appUrl}/logout`, {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).to.equal(403);
    expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(200);
  });

  describe('callback abuse', () => {
    const callback = () => `${setup.appUrl}/login/oauth2/code/${PROVIDER_ID}`;

    /** Runs the login up to the provider's redirect back to Stockroom, without following it. */
    async function codeFor(email: string) {
      const browser = setup.browser();
      const { landedOn } = await signIn(setup, browser, email, '', { stopAtCallback: true });
      expect(landedOn.startsWith(`${callback()}?`)).to.equal(true);
      return { browser, callbackUrl: landedOn };
    }

    it('When the state is missing or wrong, then back to the login page (error=invalid_state) and no session is signed in', async () => {
      const { browser, callbackUrl } = await codeFor(unique('state'));
      const url = new URL(callbackUrl);
      url.searchParams.set('state', 'forged-state');
      expectLoginPage(await browser.request(url.href), 'invalid_state');
      url.searchParams.delete('state');
      expectLoginPage(await browser.request(url.href), 'invalid_state');
      expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
    });

    it('When the ID token carries another nonce than the one this session sent, then back to the login page and no session (S5)', async () => {
      const browser = setup.browser();
      const { landedOn } = await signIn(setup, browser, unique('nonce'), '', {
        stopAtCallback: true,
        tamperAuthorization: url => {
          expect(url.searchParams.get('nonce'), 'the app sends a nonce').to.be.a('string').and.not.equal('');
          url.searchParams.set('nonce', 'a-nonce-this-session-never-sent');
        },
      });
      expect(landedOn.startsWith(`${callback()}?`)).to.equal(true);
      expectLoginPage(await browser.request(landedOn), 'login_failed');
      expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
    });

    it('When the code was issued to another client of the provider, then back to the login page and no session (S5, audience)', async () => {
      const browser = setup.browser();
      const { landedOn } = await signIn(setup, browser, unique('audience'), '', {
        stopAtCallback: true,
        tamperAuthorization: url => url.searchParams.set('client_id', OTHER_CLIENT_ID),
      });
      expect(landedOn.startsWith(`${callback()}?`)).to.equal(true);
      expect(new URL(landedOn).searchParams.get('code')).to.be.a('string');
      expectLoginPage(await browser.request(landedOn), 'login_failed');
      expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
    });

    it('When the callback comes without a code, then back to the login page (no new login is started)', async () => {
      expectLoginPage(await setup.browser().request(callback()), 'login_failed');
    });

    it('When a used callback URL is replayed, by another browser or the same one, then back to the login page', async () => {
      const email = unique('replay');
      const { browser, callbackUrl } = await codeFor(email);
      const first = await browser.request(callbackUrl);
      expect(first.status).to.equal(302);
      const thief = setup.browser();
      expectLoginPage(await thief.request(callbackUrl), 'invalid_state');
      expect((await thief.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
      expectLoginPage(await browser.request(callbackUrl), 'invalid_state');
      expect((await browser.request(`${setup.appUrl}/api/me`)).status, 'the first login stands').to.equal(
        200,
      );
    });

    it('When the user cancels at the provider, then back to the login page', async () => {
      const res = await setup
        .browser()
        .request(`${callback()}?error=access_denied&error_description=cancelled&state=x`);
      expect(res.status).to.equal(302);
      expect(res.headers.get('location')).to.equal(`${FRONT}/login?error=unauthorized`);
    });
  });
});

describe('OIDC browser login while a dependency is away', () => {
  it('When the provider cannot be discovered, then 503 (retried on the next login)', async () => {
    const { startTestApp } = await import('../support/test-app.js');
    const app = await startTestApp(
      { OIDC_ISSUER_URL: 'http://127.0.0.1:1', OIDC_CLIENT_ID: 'x', OIDC_CLIENT_SECRET: 'y' },
      { migrate: false },
    );
    try {
      for (let i = 0; i < 2; i += 1) {
        const res = await request(app.server.server).get(`/oauth2/authorization/${PROVIDER_ID}`);
        expect(res.status).to.equal(503);
        expect(res.body).to.include({ error: 'service_unavailable', messageKey: 'auth.oidc.unavailable' });
      }
    } finally {
      await app.close();
    }
  });

  it('When the session cannot be saved at login start, then 503 and no redirect to the provider', async () => {
    const setup = await startOidcSetup({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const res = await setup.browser().request(`${setup.appUrl}/oauth2/authorization/${PROVIDER_ID}`);
      expect(res.status).to.equal(503);
      expect(res.headers.get('location')).to.equal(null);
      expect(((await res.json()) as { error: string }).error).to.equal('service_unavailable');
    } finally {
      await setup.close();
    }
  });
});

describe('OIDC browser login with ALLOWED_EMAILS', () => {
  let setup: OidcSetup;
  before(async () => {
    setup = await startOidcSetup({ ALLOWED_EMAILS: 'vip@example.test, @allowed.example' });
  });
  after(async () => setup?.close());

  const count = async (email: string) =>
    Number(
      (
        await setup.app.services.orm.em
          .fork()
          .execute<{ n: string }[]>('select count(*) as n from app_user where lower(email) = lower(?)', [
            email,
          ])
      )[0].n,
    );

  it('When the e-mail is not allowed, then redirect to the login page with error=unauthorized and no user row', async () => {
    const email = unique('outsider');
    const browser = setup.browser();
    const result = await signIn(setup, browser, email);
    expect(result.landedOn).to.equal(`${FRONT}/login?error=unauthorized`);
    expect(await count(email)).to.equal(0);
    expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
  });

  it('When the e-mail or its domain is listed, then sign-in works', async () => {
    for (const email of ['VIP@example.test', `x${randomUUID().slice(0, 6)}@Allowed.Example`]) {
      const browser = setup.browser();
      const result = await signIn(setup, browser, email);
      expect(result.landedOn, email).to.equal(`${FRONT}/auth`);
      expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(200);
    }
  });

  it('When a look-alike domain signs in, then it is refused', async () => {
    const email = `x@notallowed.example`;
    const result = await signIn(setup, setup.browser(), email);
    expect(result.landedOn).to.equal(`${FRONT}/login?error=unauthorized`);
    expect(await count(email)).to.equal(0);
  });
});
