import { networkInterfaces } from 'node:os';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';

/** An address of this machine that is not loopback: requests to it arrive from it, as from a platform's router. */
function routerAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces()))
    for (const address of addresses ?? [])
      if (!address.internal && address.family === 'IPv4') return address.address;
  return undefined;
}

/**
 * Behind a platform's router every connection comes from the router. TRUST_PROXY=1 (one router) or its CIDR
 * makes req.ip the address the router saw (the last X-Forwarded-For entry), which the per-IP login limits key
 * on; what a client puts in its own X-Forwarded-For stays to the left of that entry and changes nothing.
 */
describe('TRUST_PROXY: the client address behind one router', function () {
  this.timeout(60000);
  const router = routerAddress();

  before(function () {
    if (!router) {
      console.log('      skipped: this machine has no non-loopback IPv4 address to play the router');
      this.skip();
    }
  });

  for (const trust of ['1', 'CIDR']) {
    describe(`TRUST_PROXY=${trust === 'CIDR' ? '<router>/32' : trust}`, () => {
      let app: TestApp;
      let user: TestUser;
      before(async () => {
        app = await startTestApp(
          { TRUST_PROXY: trust === 'CIDR' ? `${router}/32` : trust, LOGIN_RATE_LIMIT_POINTS: '2' },
          { migrate: false },
        );
        user = await createUser(app.services);
      });
      after(async () => app?.close());

      /** A login through the "router": the client's own X-Forwarded-For (if any), then the address it came from. */
      const login = async (clientIp: string, password: string, fakedForwardedFor?: string) => {
        const forwarded = fakedForwardedFor ? `${fakedForwardedFor}, ${clientIp}` : clientIp;
        const res = await fetch(`http://${router}:${app.server.port}/api/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': forwarded },
          body: JSON.stringify({ username: user.username, password }),
        });
        await res.arrayBuffer();
        return res.status;
      };

      it('When one client fails its logins, then it alone is limited, and faking X-Forwarded-For does not get it out', async () => {
        expect(await login('203.0.113.7', 'wrong-password-1')).to.equal(401);
        expect(await login('203.0.113.7', 'wrong-password-2', '198.51.100.1')).to.equal(401);
        // Blocked now, whatever it claims in front of the router's entry.
        expect(await login('203.0.113.7', user.password)).to.equal(429);
        expect(await login('203.0.113.7', user.password, '198.51.100.99')).to.equal(429);
        expect(await login('203.0.113.7', user.password, '127.0.0.1')).to.equal(429);
        // Another client behind the same router signs in.
        expect(await login('203.0.113.8', user.password)).to.equal(200);
      });
    });
  }
});
