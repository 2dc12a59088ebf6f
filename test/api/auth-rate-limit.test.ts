import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { api, testApp } from '../setup/hooks.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createUser } from '../support/users.js';
import { FAILS_PER_IP_PER_DAY, FAILS_PER_USERNAME_PER_DAY } from '../../api/auth/login-limiter.js';

/** A distinct client address per test (trust proxy is loopback, so X-Forwarded-For is believed). */
// A fresh address per call: two tests sharing one would share its per-IP failure budget (a 1-in-50 flake before).
let lastIp = 0;
const fakeIp = () => `198.51.100.${(lastIp = (lastIp % 250) + 1)}`;

async function pollUntil<T>(
  what: string,
  deadlineMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

describe('Login brute-force limits (rate-limiter-flexible on Redis)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp(
      { LOGIN_RATE_LIMIT_POINTS: '3', LOGIN_RATE_LIMIT_SECONDS: '2' },
      { migrate: false },
    );
  });
  after(async () => app?.close());

  const login = (username: string, password: string, ip: string, target: TestApp = app) =>
    request(target.server.server)
      .post('/api/auth/login')
      .set('X-Forwarded-For', ip)
      .send({ username, password })
      .expect(res => target.conformance.check('post', '/api/auth/login', res));

  it('When the failures per username+IP are used up, then 429 with Retry-After, even with the right password; it recovers after the window', async () => {
    const user = await createUser(app.services);
    const ip = fakeIp();
    for (let i = 0; i < 3; i += 1) await login(user.username, 'wrong', ip).expect(401);
    const blocked = await login(user.username, user.password, ip).expect(429);
    expect(blocked.body).to.include({ success: false, error: 'too_many_requests', status: 429 });
    const retryAfter = Number(blocked.headers['retry-after']);
    expect(retryAfter).to.be.within(1, 2);
    // The same username from another address is not blocked by this counter.
    await login(user.username, user.password, fakeIp()).expect(200);
    const started = Date.now();
    const ok = await pollUntil('the window to end', 5000, async () => {
      const res = await login(user.username, user.password, ip);
      return res.status === 200 ? res : undefined;
    });
    expect(ok.body.success).to.equal(true);
    expect(Date.now() - started).to.be.at.most(retryAfter * 1000 + 1500);
  });

  it('When a login succeeds, then the username+IP counter starts again', async () => {
    const user = await createUser(app.services);
    const ip = fakeIp();
    await login(user.username, 'wrong', ip).expect(401);
    await login(user.username, 'wrong', ip).expect(401);
    await login(user.username, user.password, ip).expect(200);
    for (let i = 0; i < 3; i += 1) await login(user.username, 'wrong', ip).expect(401);
    await login(user.username, 'wrong', ip).expect(429);
  });

  it('When 50 wrong passwords arrive at once, then at most LOGIN_RATE_LIMIT_POINTS are checked (401) and the rest are 429; the right password is then 429 too', async () => {
    const burstApp = await startTestApp({ LOGIN_RATE_LIMIT_POINTS: '5' }, { migrate: false });
    try {
      const user = await createUser(burstApp.services);
      const ip = fakeIp();
      const statuses = await Promise.all(
        Array.from({ length: 50 }, async () => (await login(user.username, 'wrong', ip, burstApp)).status),
      );
      const count = (status: number) => statuses.filter(s => s === status).length;
      expect(count(401)).to.be.within(1, 5);
      expect(count(401) + count(429)).to.equal(50);
      const right = await login(user.username, user.password, ip, burstApp).expect(429);
      expect(right.body.data).to.equal(null);
    } finally {
      await burstApp.close();
    }
  });

  it('When the username is unknown, then status and body are those of a wrong password', async () => {
    const user = await createUser(app.services);
    const ip = fakeIp();
    const wrong = await login(user.username, 'wrong', ip).expect(401);
    const unknown = await login(`ghost-${randomUUID()}`, 'wrong', ip).expect(401);
    const strip = (body: Record<string, unknown>) => ({ ...body, timestamp: 0, correlationId: 0 });
    expect(strip(unknown.body)).to.deep.equal(strip(wrong.body));
    expect(wrong.body).to.include({
      success: false,
      error: 'unauthorized',
      message: 'Invalid username or password',
    });
  });

  it('When one IP fails over many usernames, then it is blocked after the per-IP budget', async function () {
    this.timeout(60000);
    const ip = fakeIp();
    const user = await createUser(app.services);
    const attempts = Array.from(
      { length: FAILS_PER_IP_PER_DAY },
      (_, i) => `spray-${i}-${randomUUID().slice(0, 6)}`,
    );
    for (let i = 0; i < attempts.length; i += 4)
      await Promise.all(attempts.slice(i, i + 4).map(name => login(name, 'wrong', ip).expect(401)));
    const res = await login(user.username, user.password, ip).expect(429);
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(3600);
  });

  it('When one username fails from many IPs, then it is blocked after the per-username budget', async function () {
    this.timeout(60000);
    const user = await createUser(app.services);
    const ips = Array.from({ length: FAILS_PER_USERNAME_PER_DAY }, (_, i) => `203.0.113.${i + 1}`);
    for (let i = 0; i < ips.length; i += 4)
      await Promise.all(
        ips.slice(i, i + 4).map(ip => login(user.username.toUpperCase(), 'wrong', ip).expect(401)),
      );
    await login(user.username, user.password, '192.0.2.77').expect(429);
  });

  it('When Redis is down, then the in-memory insurance limiter still blocks', async () => {
    const offline = await startTestApp(
      { REDIS_URL: 'redis://127.0.0.1:1', LOGIN_RATE_LIMIT_POINTS: '3', LOGIN_RATE_LIMIT_SECONDS: '60' },
      { migrate: false },
    );
    try {
      const user = await createUser(offline.services);
      const ip = fakeIp();
      for (let i = 0; i < 3; i += 1) await login(user.username, 'wrong', ip, offline).expect(401);
      await login(user.username, user.password, ip, offline).expect(429);
    } finally {
      await offline.close();
    }
  });

  it('When the shared app logs in normally, then no limit is in the way', async () => {
    const user = await createUser(testApp().services);
    const res = await api()
      .post('/api/auth/login')
      .send({ username: user.username, password: user.password })
      .expect(200);
    expect(res.body.data).to.be.a('string');
  });
});
