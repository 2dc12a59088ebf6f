import { createServer, request as forward, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startLocalIdp } from '../../scripts/local-idp.js';
import { BrowserClient } from '../support/browser-client.js';
import { PROVIDER_ID, signIn, type OidcSetup } from '../support/oidc.js';
import { freePort } from '../support/ports.js';
import { startTestApp } from '../support/test-app.js';

const FRONT = 'http://127.0.0.1:5173';
const unique = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.test`;

/**
 * A local reverse proxy as nginx runs it on a plain-http dev setup (`proxy_set_header X-Forwarded-Proto
 * $scheme`): every request is passed on to the app with `X-Forwarded-Proto: http`.
 */
async function startProxy(port: number, targetPort: number): Promise<Server> {
  const proxy = createServer((req, res) => {
    const upstream = forward(
      {
        host: '127.0.0.1',
        port: targetPort,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          'x-forwarded-proto': 'http',
          'x-forwarded-for': req.socket.remoteAddress ?? '127.0.0.1',
          'x-forwarded-host': req.headers.host ?? '',
        },
      },
      answer => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502).end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>(resolve => proxy.listen(port, '127.0.0.1', resolve));
  return proxy;
}

/** Issue 13: NODE_ENV=development, loopback PUBLIC_URL, and a reverse proxy that says `http`. */
describe('OIDC browser login behind a local reverse proxy (real provider, real proxy hop)', () => {
  let setup: OidcSetup;
  let proxy: Server;
  let refusedEmail: string;

  before(async () => {
    const [proxyPort, appPort] = [await freePort(), await freePort()];
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    const idp = await startLocalIdp({
      port: 0,
      redirectUris: [`${proxyUrl}/login/oauth2/code/${PROVIDER_ID}`],
    });
    const app = await startTestApp(
      {
        ...idp.env(),
        NODE_ENV: 'development',
        PUBLIC_URL: proxyUrl,
        OIDC_PROVIDER_ID: PROVIDER_ID,
        FRONTEND_URL: FRONT,
        CORS_ORIGINS: FRONT,
        ALLOWED_EMAILS: '@example.test',
      },
      { migrate: false, port: appPort },
    );
    proxy = await startProxy(proxyPort, appPort);
    refusedEmail = `${randomUUID().slice(0, 8)}@elsewhere.test`;
    setup = {
      app,
      idp,
      appUrl: proxyUrl,
      // The browser only ever talks to the proxy and the provider; it adds no forwarding headers itself.
      browser: () => new BrowserClient([proxyUrl, idp.issuer]),
      close: async () => {
        await app.close();
        await idp.close();
      },
    };
  });
  after(async () => {
    await new Promise(resolve => proxy?.close(resolve));
    await setup?.close();
  });

  it('When a user signs in through the proxy, then the Secure SESSION cookie is set at the start and the browser lands on FRONTEND_URL/auth signed in', async () => {
    const browser = setup.browser();
    const email = unique('proxied');
    const result = await signIn(setup, browser, email);
    expect(result.preLoginSession, 'SESSION cookie on the authorization redirect').to.be.a('string');
    expect(result.landedOn).to.equal(`${FRONT}/auth`);
    const me = await browser.request(`${setup.appUrl}/api/me`);
    expect(me.status).to.equal(200);
    expect(await me.json()).to.include({ email });
    for (const cookie of browser.setCookies.filter(c => c.startsWith('SESSION=')))
      expect(cookie).to.match(/; Secure/i);
  });

  it('When the state is gone at the callback (cookie lost or session expired), then 302 to FRONTEND_URL/login?error=invalid_state', async () => {
    const browser = setup.browser();
    const { landedOn } = await signIn(setup, browser, unique('expired'), '', { stopAtCallback: true });
    browser.deleteCookie('127.0.0.1', 'SESSION');
    const res = await browser.request(landedOn);
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal(`${FRONT}/login?error=invalid_state`);
    expect(res.headers.get('content-type')).not.to.contain('json');
    expect((await browser.request(`${setup.appUrl}/api/me`)).status).to.equal(401);
  });

  it('When the e-mail is refused, then 302 to FRONTEND_URL/login?error=unauthorized', async () => {
    const result = await signIn(setup, setup.browser(), refusedEmail);
    expect(result.landedOn).to.equal(`${FRONT}/login?error=unauthorized`);
  });

  it('When the provider answers with an error, then 302 to the login page (access_denied: unauthorized, others: provider_error)', async () => {
    const callback = `${setup.appUrl}/login/oauth2/code/${PROVIDER_ID}`;
    const denied = await setup.browser().request(`${callback}?error=access_denied&state=x`);
    expect(denied.status).to.equal(302);
    expect(denied.headers.get('location')).to.equal(`${FRONT}/login?error=unauthorized`);
    const broken = await setup.browser().request(`${callback}?error=server_error&state=x`);
    expect(broken.status).to.equal(302);
    expect(broken.headers.get('location')).to.equal(`${FRONT}/login?error=provider_error`);
  });
});
