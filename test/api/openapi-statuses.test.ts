import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { inLanes } from '../support/inventory.js';

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

/*
 * The OpenAPI document is honest about the statuses every operation shares by its shape: for each operation
 * that lists 400, 401, 403, 404, 413 or 415, a request made for that status gets it, in the documented body.
 * (The reverse, that no operation answers a status it does not list, is checked on every answer of every
 * suite by test/support/openapi-conformance.ts, the fuzz over all operations included.)
 */
describe('OpenAPI document: every operation answers the statuses it lists', function () {
  this.timeout(180_000);
  let user: TestUser;
  let admin: TestUser;

  before(async () => {
    user = await createUser(testApp().services, 'ROLE_USER', 'statuses-user');
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'statuses-admin');
  });

  const listing = (status: number, only: (operation: Operation) => boolean = () => true) =>
    operations(testApp().openapi).filter(
      operation => operation.op.responses[status] !== undefined && only(operation),
    );

  /** Sends one request per operation listing `status` and expects exactly that status. */
  async function expectEach(
    status: number,
    send: (operation: Operation) => Promise<{ status: number; body: unknown }>,
    only?: (operation: Operation) => boolean,
  ): Promise<void> {
    const ops = listing(status, only);
    expect(ops.length, `operations listing ${status}`).to.be.greaterThan(0);
    const wrong: string[] = [];
    await inLanes(ops.length, 4, async i => {
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
  // write (test/api/security.test.ts).
  it('When a USER calls an ADMIN operation, or anyone writes in demo mode, then 403', async () => {
    const { startTestApp } = await import('../support/test-app.js');
    const demo = await startTestApp({ APP_DEMO_READONLY: 'true' }, { migrate: false });
    try {
      const { apiClient } = await import('../support/test-app.js');
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

  // A 404 of a reference in the body (the supplier of a new item, the products of a batch) is proven by the
  // suite of its use case.
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
