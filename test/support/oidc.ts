import { expect } from 'chai';
import { startLocalIdp, type LocalAccount, type LocalIdp } from '../../scripts/local-idp.js';
import { BrowserClient } from './browser-client.js';
import { freePort } from './ports.js';
import { startTestApp, type TestApp } from './test-app.js';

export const PROVIDER_ID = 'google';
/** Another client of the same provider, with the same redirect URI: its codes and tokens are not Stockroom's. */
export const OTHER_CLIENT_ID = 'someone-elses-app';

export interface OidcSetup {
  app: TestApp;
  idp: LocalIdp;
  appUrl: string;
  close(): Promise<void>;
  /** A fresh "browser" that can reach the app and the provider; the app sees it as behind an https proxy. */
  browser(): BrowserClient;
}

/** A real local oidc-provider plus a Stockroom app wired to it (PUBLIC_URL = the app's real address). */
export async function startOidcSetup(
  env: Record<string, string> = {},
  accounts?: LocalAccount[],
): Promise<OidcSetup> {
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  const idp = await startLocalIdp({
    port: 0,
    redirectUris: [`${appUrl}/login/oauth2/code/${PROVIDER_ID}`],
    accounts,
    otherClientIds: [OTHER_CLIENT_ID],
  });
  // A setup that fails half-way closes what it started: an open provider kept the test run from ending.
  const app = await startTestApp(
    { ...idp.env(), PUBLIC_URL: appUrl, OIDC_PROVIDER_ID: PROVIDER_ID, ...env },
    { migrate: false, port },
  ).catch(async (error: unknown) => {
    await idp.close();
    throw error;
  });
  return {
    app,
    idp,
    appUrl,
    close: async () => {
      await app.close();
      await idp.close();
    },
    browser: () => new BrowserClient([appUrl, idp.issuer], { [appUrl]: { 'x-forwarded-proto': 'https' } }),
  };
}

export interface SignInResult {
  /** Where the app finally sent the browser (the front end, not fetched). */
  landedOn: string;
  /** SESSION cookie set at the start of the login (before authentication). */
  preLoginSession?: string;
  /** SESSION cookie after the login. */
  session?: string;
}

/**
 * The whole browser login: Stockroom -> provider login form -> consent form -> callback -> front end.
 * `login` is the account name typed into the provider's form (devInteractions accepts any password).
 */
export async function signIn(
  setup: OidcSetup,
  browser: BrowserClient,
  login: string,
  query = '',
  options: { stopAtCallback?: boolean; tamperAuthorization?: (url: URL) => void } = {},
): Promise<SignInResult> {
  const host = new URL(setup.appUrl).hostname;
  const start = await browser.request(`${setup.appUrl}/oauth2/authorization/${PROVIDER_ID}${query}`);
  expect(start.status).to.equal(302);
  const preLoginSession = browser.cookie(host, 'SESSION');
  const reachable = browser.reachable;
  // Stopping at the callback: the app is "unreachable", so `follow` ends at the provider's redirect to it.
  if (options.stopAtCallback) browser.reachable = [setup.idp.issuer];
  // An attacker (or a broken proxy) may change the authorization request on its way to the provider.
  const authorization = new URL(start.headers.get('location')!, setup.appUrl);
  options.tamperAuthorization?.(authorization);
  let page = await browser.follow(authorization.href);
  for (let step = 0; step < 4 && !page.leftTo; step += 1) {
    expect(page.res.status, `${page.url} answered ${page.res.status}`).to.equal(200);
    const html = await page.res.text();
    const fields: Record<string, string> = /name="login"/.test(html)
      ? { login, password: 'any-password' }
      : {};
    page = await browser.submitForm(html, page.url, fields);
  }
  browser.reachable = reachable;
  if (!page.leftTo) throw new Error(`login did not leave the provider: ${page.url} ${page.res.status}`);
  return { landedOn: page.leftTo, preLoginSession, session: browser.cookie(host, 'SESSION') };
}
