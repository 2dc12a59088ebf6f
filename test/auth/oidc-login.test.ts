import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { signIn, startOidcSetup, type OidcSetup } from '../support/oidc.js';

const FRONT = 'https://front.example';

describe('OIDC browser login (real local oidc-provider)', () => {
  let setup: OidcSetup;
  const adminEmail = `boss-${randomUUID().slice(0, 8)}@example.test`;

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

  it('When a new user signs in, then the browser lands on FRONTEND_URL/auth with a working session', async () => {
    const browser = setup.browser();
    const email = `new-${randomUUID().slice(0, 8)}@example.test`;
    const started = Date.now();
    const result = await signIn(setup, browser, email);
    const ms = Date.now() - started;
    expect(result.landedOn).to.equal(`${FRONT}/auth`);
    const me = await browser.request(`${setup.appUrl}/api/me`);
    expect(me.status).to.equal(200);
    expect(await me.json()).to.deep.equal({ email, fullName: email, role: 'USER', pictureUrl: null });
    const row = await userRow(email);
    expect(row).to.include({ username: email, role: 'ROLE_USER', password_hash: null });
    console.log(`      full OIDC login took ${ms} ms`);
  });
});
