import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createUser, type TestUser } from '../support/users.js';
import { allRoutes } from '../../api/routes/index.js';
import { isWrite } from '../../api/middleware/authorize.js';
import type { RouteDefinition } from '../../api/routing/route-definition.js';

/** A concrete URL for a route path: every `:param` becomes a random UUID. */
const concrete = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, () => randomUUID());

describe('Demo read-only mode (APP_DEMO_READONLY=true), every route of the router', () => {
  let app: TestApp;
  let routes: RouteDefinition[];
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    app = await startTestApp({ APP_DEMO_READONLY: 'true' }, { migrate: false });
    routes = allRoutes(app.services);
    admin = await createUser(app.services, 'ROLE_ADMIN', 'demo-admin');
    user = await createUser(app.services, 'ROLE_USER', 'demo-user');
  });
  after(async () => app?.close());

  const call = (route: RouteDefinition, auth?: string) => {
    const req = request(app.server.server)
      [route.method](concrete(route.path))
      .set('X-Forwarded-Proto', 'https')
      .send({});
    return auth ? req.set('Authorization', auth) : req;
  };

  it('When any write is called, then 403 for anonymous, USER and ADMIN (login and logout excepted)', async () => {
    const writes = routes.filter(r => isWrite(r.method) && !r.allowedInDemo);
    for (const route of writes) {
      for (const auth of [undefined, user.auth, admin.auth]) {
        const res = await call(route, auth);
        expect(res.status, `${route.method} ${route.path} as ${auth ? 'token' : 'anonymous'}`).to.equal(403);
        expect(res.body.message).to.be.a('string');
      }
    }
    const exempt = routes.filter(r => isWrite(r.method) && r.allowedInDemo).map(r => `${r.method} ${r.path}`);
    expect(exempt).to.include.members(['post /api/auth/login', 'post /api/auth/logout', 'post /logout']);
  });

  it('When a read is not a demo read, then anonymous still gets 401; demo reads are public', async () => {
    for (const route of routes.filter(r => !isWrite(r.method) && r.access !== 'public')) {
      const res = await call(route);
      if (route.demoRead) expect(res.status, `${route.path}`).to.not.be.oneOf([401, 403]);
      else expect(res.status, `${route.path}`).to.equal(401);
    }
  });

  it('When someone logs in or out, then it still works', async () => {
    const res = await request(app.server.server)
      .post('/api/auth/login')
      .send({ username: admin.username, password: admin.password })
      .expect(200);
    await request(app.server.server)
      .post('/api/auth/logout')
      .set('Authorization', `Bearer ${res.body.data}`)
      .expect(204);
    await request(app.server.server).get('/api/me').set('Authorization', admin.auth).expect(200);
    await request(app.server.server).get('/api/me').expect(401);
  });
});
