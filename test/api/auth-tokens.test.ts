import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import Joi from 'joi';
import { SignJWT, generateKeyPair } from 'jose';
import { handle as i18nHandle } from 'i18next-http-middleware';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { TEST_JWT_SECRET } from '../support/test-env.js';
import { issueToken } from '../../domain/users/tokens.js';
import { authenticate } from '../../api/middleware/authenticate.js';
import { installUnitOfWork } from '../../api/middleware/unit-of-work.js';
import { correlationId } from '../../api/middleware/correlation-id.js';
import { errorHandler, errorStyle } from '../../api/middleware/error-handler.js';
import { dispatchRoutes } from '../../api/routing/dispatch-routes.js';
import { defineRoutes } from '../../api/routing/route-definition.js';
import { loadConfig, type Config } from '../../config/env.js';
import { createLogger } from '../../config/logger.js';
import { testEnv } from '../support/test-env.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** A JWT signed by hand with HMAC (any algorithm name in the header, any claims). */
function hmacToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret = TEST_JWT_SECRET,
) {
  const input = `${b64(header)}.${b64(payload)}`;
  const hash = header.alg === 'HS512' ? 'sha512' : header.alg === 'HS384' ? 'sha384' : 'sha256';
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
}

describe('Bearer tokens: every forgery is 401', () => {
  let user: TestUser;
  before(async () => {
    user = await createUser(testApp().services, 'ROLE_USER', 'jwt');
  });

  const claims = () => ({ sub: user.username, role: 'ROLE_USER', iat: now(), exp: now() + 3600 });

  const attacks: [string, () => Promise<string>][] = [
    ['alg none', async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`],
    ['alg none with a signature', async () => `${b64({ alg: 'none' })}.${b64(claims())}.c2ln`],
    [
      'a wrong key',
      async () => hmacToken({ alg: 'HS256', typ: 'JWT' }, claims(), 'another-secret-that-is-long-enough-42'),
    ],
    ['an HS512 header', async () => hmacToken({ alg: 'HS512', typ: 'JWT' }, claims())],
    ['an RS256 header with an HMAC signature', async () => hmacToken({ alg: 'RS256', typ: 'JWT' }, claims())],
    [
      'a real RS256 signature',
      async () => {
        const { privateKey } = await generateKeyPair('RS256');
        return new SignJWT({ role: 'ROLE_USER' })
          .setProtectedHeader({ alg: 'RS256' })
          .setSubject(user.username)
          .setIssuedAt()
          .setExpirationTime('1h')
          .sign(privateKey);
      },
    ],
    [
      'a real ES256 signature',
      async () => {
        const { privateKey } = await generateKeyPair('ES256');
        return new SignJWT({ role: 'ROLE_USER' })
          .setProtectedHeader({ alg: 'ES256' })
          .setSubject(user.username)
          .setIssuedAt()
          .setExpirationTime('1h')
          .sign(privateKey);
      },
    ],
    ['an expired exp', async () => hmacToken({ alg: 'HS256' }, { ...claims(), exp: now() - 10 })],
    [
      'no exp',
      async () => hmacToken({ alg: 'HS256' }, { sub: user.username, role: 'ROLE_USER', iat: now() }),
    ],
    ['nbf in the future', async () => hmacToken({ alg: 'HS256' }, { ...claims(), nbf: now() + 3600 })],
    ['no sub', async () => hmacToken({ alg: 'HS256' }, { role: 'ROLE_USER', iat: now(), exp: now() + 60 })],
    [
      'a tampered role',
      async () => {
        const [header, , signature] = user.token.split('.');
        const payload = JSON.parse(Buffer.from(user.token.split('.')[1], 'base64url').toString());
        return `${header}.${b64({ ...payload, role: 'ROLE_ADMIN' })}.${signature}`;
      },
    ],
    ['garbage', async () => 'not-a-token'],
  ];

  for (const [label, make] of attacks) {
    it(`When the token has ${label}, then 401 in the central body and no data`, async () => {
      const res = await api()
        .get('/api/me')
        .set('Authorization', `Bearer ${await make()}`)
        .expect(401);
      expect(res.body).to.include({ error: 'unauthorized', status: 401 });
      expect(res.body).to.not.have.property('email');
    });
  }

  it('When the token is sent as ?access_token=, then it is ignored (401)', async () => {
    await api().get(`/api/me?access_token=${user.token}`).expect(401);
    await api().get('/api/me').set('Authorization', user.auth).expect(200);
  });

  it('When the token expired just within the 5 s tolerance, then it still works; beyond it, 401', async () => {
    const within = hmacToken({ alg: 'HS256' }, { ...claims(), exp: now() - 2 });
    await api().get('/api/me').set('Authorization', `Bearer ${within}`).expect(200);
    const beyond = hmacToken({ alg: 'HS256' }, { ...claims(), exp: now() - 7 });
    const res = await api().get('/api/me').set('Authorization', `Bearer ${beyond}`).expect(401);
    expect(res.body.messageKey).to.equal('error.token.expired');
  });

  it('When the user is deleted, then the still-valid token is 401', async () => {
    const doomed = await createUser(testApp().services, 'ROLE_ADMIN', 'doomed');
    await api().get('/api/me').set('Authorization', doomed.auth).expect(200);
    await testApp().services.orm.em.fork().execute('delete from app_user where id = ?', [doomed.id]);
    await api().get('/api/me').set('Authorization', doomed.auth).expect(401);
  });

  it('When the role changes, then the same token acts with the new role at once', async () => {
    const admin = await createUser(testApp().services, 'ROLE_ADMIN', 'demote');
    const before = await api().get('/api/me').set('Authorization', admin.auth).expect(200);
    expect(before.body.role).to.equal('ADMIN');
    await testApp()
      .services.orm.em.fork()
      .execute(`update app_user set role = 'ROLE_USER' where id = ?`, [admin.id]);
    const after = await api().get('/api/me').set('Authorization', admin.auth).expect(200);
    expect(after.body.role).to.equal('USER');
    const authorities = await api().get('/api/me/authorities').set('Authorization', admin.auth).expect(200);
    expect(authorities.body).to.deep.equal(['ROLE_USER']);
  });
});

describe('Authorization helpers on a route table (real authenticate, real database)', () => {
  const probeRoutes = defineRoutes([
    {
      method: 'post',
      path: '/probe/admin-write',
      summary: 'admin write',
      tag: 'Probe',
      access: 'admin',
      responses: { 204: { description: 'done' } },
      handler: (_req, res) => res.status(204).end(),
    },
    {
      method: 'get',
      path: '/probe/user-read',
      summary: 'user read',
      tag: 'Probe',
      access: 'user',
      responses: { 200: { description: 'ok', schema: Joi.object() } },
      handler: (_req, res) => res.json({}),
    },
    {
      method: 'get',
      path: '/probe/demo-read',
      summary: 'demo read',
      tag: 'Probe',
      access: 'auth',
      demoRead: true,
      responses: { 200: { description: 'ok', schema: Joi.object() } },
      handler: (_req, res) => res.json({}),
    },
  ]);

  const build = (config: Config) => {
    const { services } = testApp();
    const app = express();
    installUnitOfWork(app, services.orm);
    const log = createLogger('silent');
    app.use(correlationId);
    app.use((req, _res, next) => {
      req.log = log;
      next();
    });
    app.use(i18nHandle(services.i18n));
    app.use(errorStyle);
    app.use(authenticate(config));
    app.use(dispatchRoutes(probeRoutes, config));
    app.use(errorHandler);
    return app;
  };
  const normal = () => build(testApp().services.config);
  const demo = () => build(loadConfig(testEnv({ APP_DEMO_READONLY: 'true' })));

  it('When an admin route is called, then anonymous 401, USER 403, ADMIN 2xx; a demotion is 403 at once', async () => {
    const admin = await createUser(testApp().services, 'ROLE_ADMIN', 'probe');
    const user = await createUser(testApp().services, 'ROLE_USER', 'probe');
    await request(normal()).post('/probe/admin-write').expect(401);
    await request(normal()).post('/probe/admin-write').set('Authorization', user.auth).expect(403);
    await request(normal()).post('/probe/admin-write').set('Authorization', admin.auth).expect(204);
    await testApp()
      .services.orm.em.fork()
      .execute(`update app_user set role = 'ROLE_USER' where id = ?`, [admin.id]);
    const res = await request(normal())
      .post('/probe/admin-write')
      .set('Authorization', admin.auth)
      .expect(403);
    expect(res.body).to.include({ error: 'forbidden', status: 403 });
  });

  it('When demo mode is on, then writes are 403 even for ADMIN, demo reads are public, other reads 401', async () => {
    const admin = await createUser(testApp().services, 'ROLE_ADMIN', 'demo');
    for (const auth of [undefined, admin.auth]) {
      const call = request(demo()).post('/probe/admin-write');
      const res = await (auth ? call.set('Authorization', auth) : call).expect(403);
      expect(res.body.messageKey).to.equal('error.demo.readonly');
    }
    await request(demo()).get('/probe/demo-read').expect(200);
    await request(demo()).get('/probe/user-read').expect(401);
    await request(demo()).get('/probe/user-read').set('Authorization', admin.auth).expect(200);
    await request(normal()).get('/probe/demo-read').expect(401);
  });
});

describe('Password storage', () => {
  it('When a user is created, then the stored hash is argon2id with the OWASP profile', async () => {
    const { createUser: createAccount } = await import('../../domain/users/create-user.js');
    const em = testApp().services.orm.em.fork();
    const username = `hash-${randomUUID().slice(0, 8)}`;
    await createAccount(em, { username, password: 'correct horse battery', role: 'ROLE_USER' });
    const rows = await em.execute<{ password_hash: string }[]>(
      'select password_hash from app_user where username = ?',
      [username],
    );
    expect(rows[0].password_hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(rows[0].password_hash).to.not.contain('correct horse');
    const res = await api()
      .post('/api/auth/login')
      .send({ username, password: 'correct horse battery' })
      .expect(200);
    expect(res.body.success).to.equal(true);
  });

  it('When a password is longer than 1,024 bytes, then 400 (login and account creation)', async () => {
    const { createUser: createAccount } = await import('../../domain/users/create-user.js');
    for (const password of ['x'.repeat(1025), 'é'.repeat(513)]) {
      const res = await api().post('/api/auth/login').send({ username: 'someone', password }).expect(400);
      expect(res.body).to.include({ success: false, status: 400 });
      let status = 0;
      await createAccount(testApp().services.orm.em.fork(), {
        username: `long-${randomUUID().slice(0, 8)}`,
        password,
        role: 'ROLE_USER',
      }).catch((e: { status: number }) => (status = e.status));
      expect(status).to.equal(400);
    }
    await api()
      .post('/api/auth/login')
      .send({ username: 'someone', password: 'é'.repeat(512) })
      .expect(401);
  });

  it('When a token is issued, then it is HS256 with sub, role, iat and exp', async () => {
    const token = await issueToken({ sub: 'x', role: 'ROLE_USER' }, TEST_JWT_SECRET, 60);
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map(p => JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>);
    expect(header.alg).to.equal('HS256');
    expect(payload).to.include.keys('sub', 'role', 'iat', 'exp');
  });
});
