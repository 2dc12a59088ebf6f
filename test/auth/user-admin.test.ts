import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { prepareData } from '../../scripts/prepare-data.js';
import { createUser as createAccount } from '../../domain/users/create-user.js';
import { ensureDemoUsers } from '../../domain/users/ensure-demo-users.js';
import { findOrProvisionUser, isEmailAllowed } from '../../domain/users/find-or-provision-user.js';
import type { Services } from '../../config/services.js';

const run = promisify(execFile);

const hashOf = async (username: string) =>
  (
    await testApp()
      .services.orm.em.fork()
      .execute<{ password_hash: string; role: string }[]>(
        'select password_hash, role from app_user where lower(username) = lower(?)',
        [username],
      )
  )[0];

describe('Accounts: admin CLI, bootstrap admin, demo users', () => {
  it('When `npm run user:create` runs with STOCKROOM_USER_PASSWORD, then an argon2id account exists and can log in', async function () {
    this.timeout(30000);
    const username = `cli-${randomUUID().slice(0, 8)}`;
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: TEST_DATABASE_URL,
      STOCKROOM_USER_PASSWORD: 'cli password 123',
    };
    const { stdout } = await run(
      'tsx',
      ['scripts/user-create.ts', '--username', username, '--role', 'ROLE_ADMIN'],
      { env },
    );
    expect(stdout).to.contain(`created user ${username} (ROLE_ADMIN`);
    const row = await hashOf(username);
    expect(row.role).to.equal('ROLE_ADMIN');
    expect(row.password_hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    await api().post('/api/auth/login').send({ username, password: 'cli password 123' }).expect(200);

    const dup = await createAccount(testApp().services.orm.em.fork(), {
      username: username.toUpperCase(),
      password: 'x',
      role: 'ROLE_USER',
    }).catch((error: { status: number; code: string }) => error);
    expect(dup).to.include({ status: 409, code: 'DUPLICATE_RESOURCE' });
  });

  it('When BOOTSTRAP_ADMIN_* is set, then start-up creates the admin once and never overwrites it', async () => {
    const username = `boot-${randomUUID().slice(0, 8)}`;
    const services = (password: string): Services => ({
      ...testApp().services,
      config: { ...testApp().services.config, bootstrapAdmin: { username, password } },
    });
    await prepareData(services('first-password'));
    await prepareData(services('second-password'));
    expect((await hashOf(username)).role).to.equal('ROLE_ADMIN');
    await api().post('/api/auth/login').send({ username, password: 'first-password' }).expect(200);
    await api().post('/api/auth/login').send({ username, password: 'second-password' }).expect(401);
  });

  it('When BOOTSTRAP_ADMIN_* is set for a Procfile deploy, then the release step creates the admin, once', async function () {
    this.timeout(60000);
    const username = `release-${randomUUID().slice(0, 8)}`;
    const release = (password: string) =>
      run('tsx', ['scripts/migrate.ts'], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          NODE_ENV: 'production',
          DATABASE_URL: TEST_DATABASE_URL,
          SESSION_SECRET: 'release-session-secret-0123456789',
          JWT_SECRET: 'release-jwt-secret-that-is-long-enough-0123',
          BOOTSTRAP_ADMIN_USERNAME: username,
          BOOTSTRAP_ADMIN_PASSWORD: password,
        },
      });
    expect((await release('release password 1')).stdout).to.contain(`bootstrap admin created: ${username}`);
    expect((await release('release password 2')).stdout).not.to.contain('bootstrap admin created');
    expect((await hashOf(username)).role).to.equal('ROLE_ADMIN');
    await api().post('/api/auth/login').send({ username, password: 'release password 1' }).expect(200);
    await api().post('/api/auth/login').send({ username, password: 'release password 2' }).expect(401);
  });

  it('When demo users are asked for in production, then it refuses; elsewhere admin/admin123 and user/user123', async () => {
    const em = testApp().services.orm.em.fork();
    const count = async () =>
      Number((await em.execute<{ n: string }[]>('select count(*) as n from app_user'))[0].n);
    const before = await count();
    let refused = false;
    await ensureDemoUsers(em, 'production').catch(() => (refused = true));
    expect(refused).to.equal(true);
    expect(await count()).to.equal(before);
    await ensureDemoUsers(em, 'test');
    await ensureDemoUsers(em, 'test');
    await api().post('/api/auth/login').send({ username: 'admin', password: 'admin123' }).expect(200);
    await api().post('/api/auth/login').send({ username: 'user', password: 'user123' }).expect(200);
    expect((await hashOf('admin')).role).to.equal('ROLE_ADMIN');
    expect((await hashOf('user')).role).to.equal('ROLE_USER');
    await testApp()
      .services.orm.em.fork()
      .execute(`delete from app_user where username in ('admin', 'user')`);
  });

  it('When e-mails are checked against ALLOWED_EMAILS, then exact e-mails and @domain entries match, nothing else', () => {
    const allowed = ['vip@example.test', '@corp.example'];
    expect(isEmailAllowed('VIP@example.test', allowed)).to.equal(true);
    expect(isEmailAllowed('a@corp.example', allowed)).to.equal(true);
    expect(isEmailAllowed('a@sub.corp.example', allowed)).to.equal(false);
    expect(isEmailAllowed('a@corp.example.evil', allowed)).to.equal(false);
    expect(isEmailAllowed('vip@example.test.evil', allowed)).to.equal(false);
    expect(isEmailAllowed('anyone@anywhere', [])).to.equal(true);
  });

  it('When two first logins of the same e-mail race, then exactly one account exists', async () => {
    const email = `race-${randomUUID().slice(0, 8)}@example.test`;
    const policy = { adminEmails: [], allowedEmails: [] };
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        findOrProvisionUser(testApp().services.orm.em.fork(), { email }, policy),
      ),
    );
    const ids = new Set(results.map(r => (r.outcome === 'signed-in' ? r.userId : 0)));
    expect(ids.size).to.equal(1);
    expect(results.filter(r => r.outcome === 'signed-in' && r.created)).to.have.length(1);
  });

  it('When the provider says the e-mail is unverified, then the login is refused', async () => {
    const email = `unverified-${randomUUID().slice(0, 8)}@example.test`;
    const result = await findOrProvisionUser(
      testApp().services.orm.em.fork(),
      { email, emailVerified: false },
      { adminEmails: [], allowedEmails: [] },
    );
    expect(result.outcome).to.equal('refused');
  });
});
