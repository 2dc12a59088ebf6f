import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { signIn, startOidcSetup, type OidcSetup } from '../support/oidc.js';
import { createUser } from '../support/users.js';
import type { BrowserClient } from '../support/browser-client.js';

const FRONT = 'https://front.example';

describe('CSRF: cookie-authenticated writes need a trusted Origin', () => {
  let setup: OidcSetup;
  before(async () => {
    setup = await startOidcSetup({ CORS_ORIGINS: `${FRONT},https://admin.example` });
  });
  after(async () => setup?.close());

  const signedIn = async (): Promise<BrowserClient> => {
    const browser = setup.browser();
    await signIn(setup, browser, `csrf-${randomUUID().slice(0, 8)}@example.test`);
    return browser;
  };
  const stillSignedIn = async (browser: BrowserClient) =>
    (await browser.request(`${setup.appUrl}/api/me`)).status === 200;

  const forged: [string, Record<string, string>][] = [
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['Origin null', { origin: 'null' }],
    ['a look-alike Origin', { origin: 'https://front.example.evil.com' }],
    ['a look-alike prefix', { origin: 'https://front.exampl' }],
    ['another scheme', { origin: 'http://front.example' }],
    ['another port', { origin: 'https://front.example:8443' }],
    ['no Origin and no Referer', {}],
    ['no Origin and a foreign Referer', { referer: 'https://evil.example/page' }],
    ['a form-style text/plain POST', { origin: 'https://evil.example', 'content-type': 'text/plain' }],
  ];

  for (const [label, headers] of forged) {
    it(`When a cookie POST comes with ${label}, then 403 in the central body and nothing changes`, async () => {
      const browser = await signedIn();
      const res = await browser.request(`${setup.appUrl}/api/auth/logout?lang=de`, {
        method: 'POST',
        headers,
      });
      expect(res.status).to.equal(403);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).to.include({ error: 'forbidden', status: 403, messageKey: 'auth.csrf.origin' });
      expect(String(body.message)).to.match(/Herkunft/);
      expect(res.headers.getSetCookie().some(c => c.includes('Max-Age=0'))).to.equal(false);
      expect(await stillSignedIn(browser), 'session untouched').to.equal(true);
    });
  }

  for (const spelling of ['SESSION =', 'SESSION\t=', 'SESSION  =', 'theme=dark; SESSION =']) {
    it(`When the cookie header is written ${JSON.stringify(spelling)}, then the session still needs a trusted Origin`, async () => {
      const browser = await signedIn();
      const value = browser.cookie(new URL(setup.appUrl).hostname, 'SESSION')!;
      const cookie = `${spelling}${value}`;
      const me = await browser.request(`${setup.appUrl}/api/me`, { headers: { cookie } });
      expect(me.status, 'this spelling authenticates').to.equal(200);
      const res = await browser.request(`${setup.appUrl}/api/auth/logout`, {
        method: 'POST',
        headers: { cookie, origin: 'https://evil.example' },
      });
      expect(res.status).to.equal(403);
      expect(((await res.json()) as Record<string, unknown>).messageKey).to.equal('auth.csrf.origin');
      expect(await stillSignedIn(browser), 'session untouched').to.equal(true);
    });
  }

  it('When a non-browser client logs in with a stale or forged session cookie and no Origin, then it gets its token', async () => {
    const user = await createUser(setup.app.services);
    const browser = await signedIn();
    const stale = browser.cookie(new URL(setup.appUrl).hostname, 'SESSION')!;
    const out = await browser.request(`${setup.appUrl}/api/auth/logout`, {
      method: 'POST',
      headers: { origin: FRONT },
    });
    expect(out.status).to.equal(204);
    for (const cookie of [`SESSION=${stale}`, 'SESSION=s%3Aforged.c2lnbmF0dXJl', `SESSION =${stale}`]) {
      const res = await request(setup.app.server.server)
        .post('/api/auth/login')
        .set('Cookie', cookie)
        .set('X-Forwarded-Proto', 'https')
        .send({ username: user.username, password: user.password });
      expect(res.status, cookie).to.equal(200);
      expect(res.body).to.include({ success: true });
    }
  });

  for (const origin of [FRONT, 'https://admin.example']) {
    it(`When a cookie POST comes from the allowed origin ${origin}, then it passes`, async () => {
      const browser = await signedIn();
      const res = await browser.request(`${setup.appUrl}/api/auth/logout`, {
        method: 'POST',
        headers: { origin },
      });
      expect(res.status).to.equal(204);
      expect(await stillSignedIn(browser)).to.equal(false);
    });
  }

  it("When a cookie POST comes from the service's own origin, or only a trusted Referer, then it passes", async () => {
    const own = await signedIn();
    const res = await own.request(`${setup.appUrl}/api/auth/logout`, {
      method: 'POST',
      headers: { origin: setup.appUrl },
    });
    expect(res.status).to.equal(204);
    const viaReferer = await signedIn();
    const ref = await viaReferer.request(`${setup.appUrl}/api/auth/logout`, {
      method: 'POST',
      headers: { referer: `${FRONT}/settings?tab=1` },
    });
    expect(ref.status).to.equal(204);
  });

  it('When a bearer request has no Origin, then it passes (the exemption)', async () => {
    const user = await createUser(setup.app.services);
    const res = await request(setup.app.server.server)
      .post('/api/auth/logout')
      .set('Authorization', user.auth)
      .set('X-Forwarded-Proto', 'https');
    expect(res.status).to.equal(204);
  });

  it('When a cookie GET comes from anywhere, then reads are not affected', async () => {
    const browser = await signedIn();
    const res = await browser.request(`${setup.appUrl}/api/me`, {
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('When an unlisted origin sends a preflight, then no Access-Control-Allow-Origin; a listed one gets credentials', async () => {
    const server = setup.app.server.server;
    const evil = await request(server)
      .options('/api/auth/logout')
      .set('Origin', 'https://front.example.evil.com')
      .set('Access-Control-Request-Method', 'POST');
    expect(evil.headers['access-control-allow-origin']).to.equal(undefined);
    expect(evil.headers['access-control-allow-credentials']).to.equal(undefined);
    expect(evil.status).to.be.below(500);
    const good = await request(server)
      .options('/api/auth/logout')
      .set('Origin', FRONT)
      .set('Access-Control-Request-Method', 'POST');
    expect(good.headers['access-control-allow-origin']).to.equal(FRONT);
    expect(good.headers['access-control-allow-credentials']).to.equal('true');
  });
});
