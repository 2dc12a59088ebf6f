import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import pg from 'pg';
import type { Response } from 'supertest';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { inLanes } from '../support/inventory.js';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../support/test-app.js';
import { TEST_DATABASE_URL, testEnv } from '../support/test-env.js';
import { OperationFixtures } from '../support/operation-fixtures.js';
import { SUCCESSFUL_REQUESTS, type Prepared } from '../support/successful-requests.js';
import { sessionCookie, signedInSession } from '../support/session-cookie.js';
import { tcpProxy, throughProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';
import { encodeChangeCursor } from '../../domain/inventory/item-changes-feed.js';

type Doc = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  template: string;
  op: Doc;
}

const operations = (doc: Doc): Operation[] =>
  Object.entries<Doc>(doc.paths).flatMap(([template, methods]) =>
    Object.entries<Doc>(methods).map(([method, op]) => ({
      method: method as Operation['method'],
      template,
      op,
    })),
  );

/** A path value its schema takes that names nothing: a fresh uuid, a product id far beyond any, a job id. */
function absentValue(schema: Doc): string {
  if (schema.format === 'uuid') return randomUUID();
  if (typeof schema.pattern === 'string' && /\\d|\[0-9\]/.test(schema.pattern)) return '987654321';
  return `absent-${Date.now()}`;
}

const pathOf = (operation: Operation) =>
  operation.template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const param = (operation.op.parameters as Doc[]).find(p => p.in === 'path' && p.name === name)!;
    return absentValue(param.schema);
  });

/** The success requests of an operation (SUCCESSFUL_REQUESTS), its cheapest first. */
const successesOf = (operation: Operation) =>
  Object.keys(SUCCESSFUL_REQUESTS).filter(key =>
    key.startsWith(`${operation.method} ${operation.template} `),
  );

/** The cheapest request that succeeds on `operation`, with its fixtures made. */
const prepare = (operation: Operation, fx: OperationFixtures): Promise<Prepared> =>
  SUCCESSFUL_REQUESTS[successesOf(operation)[0]](fx);

/** Success statuses whose request needs workers running (a replenishment run): made one at a time. */
const WITH_WORKERS = new Set(['post /api/replenishment/draft-orders 201']);

/**
 * Operations that answer without the database: the liveness check (from the last probe), the product health
 * check (500 when the database is down), the browser logout (the session store only), the admin jobs (Redis).
 */
const WITHOUT_DATABASE = new Set([
  'get /api/health',
  'get /health',
  'post /logout',
  'post /api/admin/reports/rebuild',
  'get /api/admin/reports/rebuild/{jobId}',
  'post /api/admin/integrity/check',
  'get /api/admin/integrity/check/{jobId}',
  'post /api/admin/replenishment/run',
  'get /api/admin/replenishment/run/{jobId}',
]);

/** The health checks: no session is loaded for them, so the session store being away changes nothing. */
const SESSIONLESS = new Set(['get /api/health', 'get /api/health/db', 'get /health']);

/** Requests whose body names something that does not exist (the operation's path names nothing). */
const BODY_REFERENCE_ABSENT: Record<string, (client: ApiClient, auth: string) => Promise<Response>> = {
  'post /api/inventory': async (c, auth) =>
    c
      .post('/api/inventory')
      .set('Authorization', auth)
      .send({ name: `Item ${randomUUID()}`, quantity: 1, price: 1, supplierId: randomUUID() }),
  'put /api/products/stock/batch': async (c, auth) =>
    c
      .put('/api/products/stock/batch')
      .set('Authorization', auth)
      .send({ updates: [{ productId: 987654321, quantity: 1 }] }),
  'delete /api/products': async (c, auth) =>
    c
      .delete('/api/products')
      .set('Authorization', auth)
      .send({ ids: [987654321] }),
  'post /api/purchase-orders': async (c, auth) =>
    c
      .post('/api/purchase-orders')
      .set('Authorization', auth)
      .send({ supplierId: randomUUID(), lines: [{ itemId: randomUUID(), quantity: 1 }] }),
  'post /api/replenishment/draft-orders': async (c, auth) =>
    c.post('/api/replenishment/draft-orders').set('Authorization', auth).send({ supplierId: randomUUID() }),
};

/*
 * The OpenAPI document lists exactly what every operation answers: for each operation and each status it
 * lists, a request made for that status gets it, in the documented body, and the last test checks that every
 * listed (operation, status) was answered to the requests of this suite. (The reverse, that no operation
 * answers a status it does not list, is checked on every answer of every suite by
 * test/support/openapi-conformance.ts, the fuzz over all operations included.)
 */
describe('OpenAPI document: every operation answers the statuses it lists', function () {
  this.timeout(180_000);
  let user: TestUser;
  let admin: TestUser;
  let fx: OperationFixtures;
  /** `operationId status` of every answer to this suite's requests, from every app they went to. */
  const produced = new Set<string>();
  const unwatch: (() => void)[] = [];
  const watched = (app: TestApp) => {
    unwatch.push(app.conformance.watch(pair => produced.add(pair)));
    return app;
  };

  before(async () => {
    watched(testApp());
    user = await createUser(testApp().services, 'ROLE_USER', 'statuses-user');
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'statuses-admin');
    fx = new OperationFixtures(api(), testApp().services, admin, user);
  });
  after(() => unwatch.forEach(stop => stop()));

  const listing = (status: number, only: (operation: Operation) => boolean = () => true) =>
    operations(testApp().openapi).filter(
      operation => operation.op.responses[status] !== undefined && only(operation),
    );

  /** A successful request of each of `ops`, its fixtures made (before the app they go to loses something). */
  async function preparedFor(ops: Operation[]): Promise<(operation: Operation) => Prepared> {
    const prepared = await inLanes(ops.length, 4, i => prepare(ops[i], fx));
    const byKey = new Map(
      ops.map((operation, i) => [`${operation.method} ${operation.template}`, prepared[i]]),
    );
    return operation => byKey.get(`${operation.method} ${operation.template}`)!;
  }

  /** Sends one request per operation listing `status` and expects exactly that status. */
  async function expectEach(
    status: number,
    send: (operation: Operation) => Promise<{ status: number; body: unknown }>,
    only?: (operation: Operation) => boolean,
    lanes = 4,
  ): Promise<void> {
    const ops = listing(status, only);
    expect(ops.length, `operations listing ${status}`).to.be.greaterThan(0);
    const wrong: string[] = [];
    await inLanes(ops.length, lanes, async i => {
      const res = await send(ops[i]);
      if (res.status !== status)
        wrong.push(
          `${ops[i].method} ${ops[i].template}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`,
        );
    });
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  }

  it('When an anonymous caller calls an operation that lists 401, then 401', async () =>
    expectEach(401, operation => {
      const path = pathOf(operation);
      return api()
        [operation.method](path)
        .send(bodyFor(operation, path) as object);
    }));

  // Login, logout and the filter query stay allowed in demo mode: their 403 is the origin check of a cookie
  // write (the next test).
  it('When a USER calls an ADMIN operation, or anyone writes in demo mode, then 403', async () => {
    const demo = watched(await startTestApp({ APP_DEMO_READONLY: 'true' }, { migrate: false }));
    try {
      const demoApi = apiClient(demo);
      await expectEach(
        403,
        operation =>
          operation.op['x-access'] === 'admin'
            ? api()[operation.method](pathOf(operation)).set('Authorization', user.auth).send()
            : demoApi[operation.method](pathOf(operation)).set('Authorization', admin.auth).send(),
        operation => !operation.op['x-allowed-in-demo'],
      );
    } finally {
      await demo.close();
    }
  });

  it('When a write of an allowed-in-demo operation comes with a signed-in session cookie from a foreign Origin, then 403', async () => {
    const cookie = await signedInSession(testApp().services, user.id);
    await expectEach(
      403,
      async operation =>
        (await prepare(operation, fx))(api())
          .unset('Authorization')
          .set('Cookie', cookie)
          .set('Origin', 'https://evil.example'),
      operation => operation.op['x-allowed-in-demo'] === true,
    );
  });

  it('When the body names something that does not exist, then every operation without a path id that lists 404 answers 404', async () =>
    expectEach(
      404,
      operation => BODY_REFERENCE_ABSENT[`${operation.method} ${operation.template}`](api(), admin.auth),
      operation => !operation.template.includes('{'),
    ));

  it('When the path names nothing, then every operation with a path id that lists 404 answers 404', async () =>
    expectEach(
      404,
      operation => {
        const path = pathOf(operation);
        const request = api()
          [operation.method](`${path}${requiredQuery(operation)}`)
          .set('Authorization', admin.auth);
        return operation.method === 'get' ? request.send() : request.send(bodyFor(operation, path) as object);
      },
      operation => operation.template.includes('{'),
    ));

  it('When a query carries a NUL, then every operation answers 400', async () =>
    expectEach(400, operation =>
      api()
        [operation.method](`${pathOf(operation)}?lang=%00`)
        .set('Authorization', admin.auth)
        .send(),
    ));

  it('When a write gets a body of a content type it does not take, then 415 unsupported_media_type (en and de)', async () => {
    await expectEach(415, operation =>
      api()
        [operation.method](`${pathOf(operation)}?lang=de`)
        .set('Authorization', admin.auth)
        .set('Content-Type', 'application/xml')
        .send('<x/>'),
    );
    const en = await api()
      .post('/api/suppliers')
      .set('Authorization', admin.auth)
      .set('Content-Type', 'text/plain')
      .send('name=x')
      .expect(415);
    expect(en.body).to.include({ error: 'unsupported_media_type', status: 415 });
    expect(en.body.message).to.equal('This operation takes a JSON body (application/json), not text/plain');
    const de = await api()
      .post('/api/suppliers?lang=de')
      .set('Authorization', admin.auth)
      .set('Content-Type', 'text/plain')
      .send('name=x')
      .expect(415);
    expect(de.body.message).to.equal(
      'Dieser Vorgang nimmt einen JSON-Anfragekörper (application/json) an, nicht text/plain',
    );
  });

  it('When a write gets a body larger than it takes, then 413', async () => {
    const huge = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) });
    // One line more than IMPORT_MAX_BYTES takes (declared in Content-Length, so refused before it is read).
    const line = `${'x'.repeat(1023)}\n`;
    const hugeCsv = `name\n${line.repeat(Math.ceil(testApp().services.config.importMaxBytes / line.length) + 1)}`;
    await expectEach(413, operation => {
      const upload = operation.op.requestBody?.content?.['text/csv'];
      return api()
        [operation.method](pathOf(operation))
        .set('Authorization', admin.auth)
        .set('Content-Type', upload ? 'text/csv' : 'application/json')
        .send(upload ? hugeCsv : huge)
        .catch((error: Error & { response?: { status: number; body: unknown } }) => {
          if (error.response) return error.response;
          throw error;
        });
    });
  });

  it('When each operation is called as its use case wants, then it answers each success status it lists', async () => {
    const listed = operations(testApp().openapi).flatMap(operation =>
      Object.keys(operation.op.responses)
        .filter(status => Number(status) < 400)
        .map(status => `${operation.method} ${operation.template} ${status}`),
    );
    expect(Object.keys(SUCCESSFUL_REQUESTS).sort()).to.deep.equal(listed.sort());
    const wrong: string[] = [];
    const check = async (key: string) => {
      const res = await (await SUCCESSFUL_REQUESTS[key](fx))(api());
      if (res.status !== Number(key.split(' ').at(-1)))
        wrong.push(`${key}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    };
    const together = listed.filter(key => !WITH_WORKERS.has(key));
    await inLanes(together.length, 4, i => check(together[i]));
    for (const key of WITH_WORKERS) await check(key);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('When the session store is away, then every operation answers 503 to a browser; when the database is away, every operation that needs it answers 503 (GET /health 500)', async () => {
    const redisUrl = testEnv().REDIS_URL!;
    const redisProxy = await tcpProxy(Number(new URL(redisUrl).port || 6379));
    const dbProxy = await tcpProxy(Number(new URL(TEST_DATABASE_URL).port || 5432));
    const away = watched(
      await startTestApp(
        {
          REDIS_URL: throughProxy(redisUrl, redisProxy),
          DATABASE_URL: throughProxy(TEST_DATABASE_URL, dbProxy),
        },
        { migrate: false },
      ),
    );
    try {
      const prepared = await preparedFor(listing(503));
      redisProxy.cut();
      await waitFor(() => away.services.redis.status !== 'ready', 5000, 'the app to lose Redis');
      // A session cookie is loaded from the store before anything else looks at the request.
      const cookie = sessionCookie(away.services.config.sessionSecret);
      const client = apiClient(away);
      await expectEach(
        503,
        async operation => prepared(operation)(client).set('Cookie', cookie),
        operation => !SESSIONLESS.has(`${operation.method} ${operation.template}`),
      );
      // The health checks load no session: they answer what they check.
      for (const key of SESSIONLESS) await client.get(key.slice(4)).set('Cookie', cookie).expect(200);
      // Without a cookie nothing is loaded, but a browser logout still ends the session in the store.
      const logout = await client.post('/logout').expect(503);
      expect(logout.body.messageKey).to.equal('error.session.unavailable');
      redisProxy.restore();
      await waitFor(() => away.services.redis.status === 'ready', 10000, 'the app to have Redis again');
      dbProxy.cut();
      const health = await client.get('/health').expect(500);
      expect(health.body).to.deep.equal({ status: 'DOWN', db: 'DOWN' });
      // The same requests (bearer, no cookie) with the database away: 503 in the route family's body.
      await expectEach(
        503,
        async operation => prepared(operation)(client),
        operation => !WITHOUT_DATABASE.has(`${operation.method} ${operation.template}`),
      );
    } finally {
      redisProxy.restore();
      dbProxy.restore();
      await away.close();
      await Promise.all([redisProxy.close(), dbProxy.close()]);
    }
  });

  it('When every transaction of a write loses a serialization check, then each write that lists 409 answers 409 once its retries are used up', async () => {
    // The writes go to an app signed in to PostgreSQL as a role of its own, whose every row change fails as
    // a serialization failure would; the fixtures are made through the shared app.
    const role = `stockroom_conflicts_${process.pid}`;
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    let conflicted: TestApp | undefined;
    try {
      await db.query(`drop role if exists ${role}`);
      await db.query(`create role ${role} login superuser`);
      await db.query(`
        create function statuses_test_conflict() returns trigger language plpgsql as $$
        begin
          if current_user = '${role}' then
            raise exception 'a serialization failure made by a test' using errcode = '40001';
          end if;
          return null;
        end $$;
        do $$ declare t text;
        begin
          for t in select tablename from pg_tables where schemaname = 'public' loop
            execute format('create trigger statuses_test_conflict before insert or update or delete on %I
              for each statement execute function statuses_test_conflict()', t);
          end loop;
        end $$;`);
      const url = new URL(TEST_DATABASE_URL);
      url.username = role;
      conflicted = watched(await startTestApp({ DATABASE_URL: url.toString() }, { migrate: false }));
      const client = apiClient(conflicted);
      const prepared = await preparedFor(listing(409));
      // With an Idempotency-Key, even a write that finds nothing to change records its key (and conflicts).
      await expectEach(409, async operation =>
        prepared(operation)(client).set('Idempotency-Key', randomUUID()),
      );
    } finally {
      await conflicted?.close();
      await db.query('drop function if exists statuses_test_conflict() cascade');
      await db.query(`drop role if exists ${role}`);
      await db.end();
    }
  });

  it('When an Idempotency-Key is sent again with another request, then every write that lists 422 answers 422', async () =>
    expectEach(422, async operation => {
      const key = randomUUID();
      const first = await (await prepare(operation, fx))(api()).set('Idempotency-Key', key);
      expect(first.status, `${operation.method} ${operation.template}`).to.be.below(300);
      return (await prepare(operation, fx))(api()).set('Idempotency-Key', key);
    }));

  it('When If-Match names the version before the last change, then every write that lists 412 answers 412', async () =>
    expectEach(412, async operation => {
      const stale = fx.staled();
      const prepared = await prepare(operation, stale);
      return prepared(api()).set('If-Match', stale.staleEtag!);
    }));

  it('When the change feed is asked from a cursor older than it keeps, then 410', async () => {
    const old = encodeChangeCursor({ xid: '1', id: '1', issuedAt: Date.now() - 31 * 86_400_000 });
    await expectEach(410, async () =>
      api().get(`/api/inventory/changes?since=${old}`).set('Authorization', user.auth),
    );
  });

  it('When a user holds as many streams as STREAMS_PER_USER, or used up the failed logins, then 429 with Retry-After', async () => {
    const limited = watched(
      await startTestApp({ STREAMS_PER_USER: '1', LOGIN_RATE_LIMIT_POINTS: '1' }, { migrate: false }),
    );
    // The tables the streams read are locked, so each user's first stream holds its slot until they are free.
    const lock = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await lock.connect();
    try {
      const client = apiClient(limited);
      const streams = listing(429, operation => operation.op['x-access'] !== 'public');
      const users = await Promise.all(
        streams.map(() => createUser(testApp().services, 'ROLE_USER', 'streams')),
      );
      const prepared = await Promise.all(streams.map(operation => prepare(operation, fx)));
      // One operation at a time: a first stream of its user waits on the lock (holding its slot and a stream
      // connection), the second of the same user is refused.
      await expectEach(
        429,
        async operation => {
          const i = streams.findIndex(s => s.op.operationId === operation.op.operationId);
          await lock.query('begin');
          await lock.query('lock table inventory_item, stock_history, product in access exclusive mode');
          const first = prepared[i](client)
            .set('Authorization', users[i].auth)
            .then(res => res);
          // Asked on a connection of its own: inside the lock's transaction, pg_stat_activity would not move.
          await waitFor(
            async () =>
              (
                await testApp()
                  .services.orm.em.fork()
                  .execute<{ n: string }[]>(
                    `select count(*) as n from pg_stat_activity
                      where datname = current_database() and application_name = 'stockroom-stream'
                        and wait_event_type = 'Lock'`,
                  )
              )[0].n !== '0',
            10000,
            'the first stream to wait on the lock',
          );
          const res = await prepared[i](client).set('Authorization', users[i].auth);
          await lock.query('commit');
          expect((await first).status, 'the first stream').to.equal(200);
          if (res.status === 429) expect(Number(res.headers['retry-after']), 'Retry-After').to.be.at.least(1);
          return res;
        },
        operation => operation.op['x-access'] !== 'public',
        1,
      );
      const login = fx.user.username;
      await client.post('/api/auth/login').send({ username: login, password: 'wrong' }).expect(401);
      await expectEach(
        429,
        async () => client.post('/api/auth/login').send({ username: login, password: 'wrong' }),
        operation => operation.op['x-access'] === 'public',
      );
    } finally {
      await lock.query('rollback').catch(() => undefined);
      await lock.end();
      await limited.close();
    }
  });

  it('When the document is read, then every operation lists its errors with a schema and an example the schema takes', () => {
    const doc = testApp().openapi;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const wrong: string[] = [];
    for (const { method, template, op } of operations(doc)) {
      expect(op.responses.default, `${method} ${template}`).to.equal(undefined);
      expect(op.summary, `${method} ${template}: a summary names the operation, not an id`).not.to.match(
        /\b[A-Z]\d{1,2}\b/,
      );
      for (const [status, response] of Object.entries<Doc>(op.responses)) {
        const media = response.content?.['application/json'];
        if (!media) continue;
        if (media.example === undefined) {
          wrong.push(`${method} ${template} ${status}: no example`);
          continue;
        }
        const validate = ajv.compile({ ...media.schema, components: doc.components });
        if (!validate(media.example))
          wrong.push(`${method} ${template} ${status}: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    const adjust = doc.paths['/api/inventory/{id}/quantity'].patch.responses;
    expect(Object.keys(adjust)).to.include.members([
      '200',
      '400',
      '401',
      '404',
      '409',
      '412',
      '415',
      '422',
      '503',
    ]);
  });

  it('When every request of this suite has been answered, then each (operation, status) the document lists was answered', () => {
    const listed = operations(testApp().openapi).flatMap(({ op }) =>
      Object.keys(op.responses).map(status => `${op.operationId} ${status}`),
    );
    const missing = listed.filter(pair => !produced.has(pair));
    expect(missing, `listed, never answered:\n${missing.join('\n')}`).to.deep.equal([]);
    // Every answer is checked against the document (an unlisted status throws), so none is beyond the list.
    expect([...produced].sort()).to.deep.equal(listed.sort());
  });
});

/** The required query parameters, each with its example from the document. */
function requiredQuery(operation: Operation): string {
  const query = (operation.op.parameters as Doc[])
    .filter(p => p.in === 'query' && p.required)
    .map(p => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(p.example))}`);
  return query.length ? `?${query.join('&')}` : '';
}

/** Bodies whose smallest valid form the schema cannot say: one of two optional fields is required. */
const BODIES: Record<string, unknown> = { 'put /api/products/{id}/price': { price: 1 } };

/** A JSON body with the required fields of the operation's body schema (its example); a body id is the path's. */
function bodyFor(operation: Operation, path: string): unknown {
  const fixed = BODIES[`${operation.method} ${operation.template}`];
  if (fixed) return fixed;
  const example = operation.op.requestBody?.content?.['application/json']?.example;
  if (!example || typeof example !== 'object' || !('id' in example)) return example;
  return { ...example, id: path.split('/').pop() };
}
