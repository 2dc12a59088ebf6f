import { expect } from 'chai';
import fc from 'fast-check';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ownDatabase, testApp, testDatabaseUrl } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { apiClient, startTestApp, type TestApp } from '../support/test-app.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { createProduct } from '../support/products.js';
import { seedDemoData } from '../../scripts/seed-demo.js';
import { scaled } from '../support/machine-time.js';

/*
 * S12: requests generated from the OpenAPI document for EVERY operation (path, query, body, headers), as admin,
 * user and anonymous: wrong types, overflow, arrays for scalars, `__proto__` keys, 10,000-level nesting, 2 MB
 * bodies, invalid UTF-8, wrong content types, CR/LF/NUL in headers (over raw sockets). Every answer must be
 * < 500, within 5 s, and (for errors) in the documented shape of its route family. Writes are generated
 * invalid (a path id that does not exist, or a poisoned field/parameter/body), so every table must be
 * unchanged afterwards.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_500);
const LANES = 12;
/** How long one fuzzed request may take to be answered, on a quiet machine. */
const DEADLINE_MS = scaled(5000);
/** Tables whose rows must not change; idempotency keys and migrations are bookkeeping, not data. */
const IGNORED_TABLES = new Set(['mikro_orm_migrations', 'idempotency_key']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, any>;
type Actor = 'admin' | 'user' | 'anonymous';

interface Operation {
  method: string;
  template: string;
  parameters: { in: string; name: string; required?: boolean; schema: Schema }[];
  body?: Schema;
}

/** What the generator decided; turned into bytes by `render`. */
interface Plan {
  op: number;
  actor: Actor;
  pathValues: string[];
  query: [string, string][];
  body?: { kind: 'json'; value: Json; protoKey: boolean } | { kind: 'raw'; text: string };
  bodyBytes?: 'deep' | 'deepField' | 'huge' | 'badUtf8';
  contentType?: string;
  headers: [string, string][];
  /** Sent over a raw socket with a CR, LF or NUL injected into a header. */
  brokenHeader?: string;
}

const NASTY_TEXT = [
  '',
  ' ',
  '0',
  '-1',
  '-0',
  '1e2',
  '5.',
  ' 5',
  '+5',
  '0x10',
  '1.5',
  'NaN',
  'Infinity',
  '2147483648',
  '-2147483649',
  '9223372036854775808',
  '99999999999999999999999',
  'true',
  'null',
  'undefined',
  '[]',
  '{}',
  '%',
  '_',
  '\\',
  "' or 1=1 --",
  '"; drop table product; --',
  '\u0000',
  '\u202e\u0301',
  'ä😀',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '-271821-04-20',
  '+010000-01-01T00:00:00Z',
  '-004714-01-01',
  '9999-12-31',
  '9999-12-30',
  '1900-01-01',
  '0001-01-01',
  '2026-02-30',
  '2026-13-01',
  '2026-01-01T25:00:00Z',
  '2026-01-01T00:00:00+99:00',
  'SALE',
  'sale',
  'PRICE_CHANGE',
  'name,desc',
  'name,asc,extra',
  'x,sideways',
  'daily',
  'weekly',
  '__proto__',
  'constructor',
  'x'.repeat(300),
  'y'.repeat(5000),
];

const NASTY_JSON: Json[] = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  0.001,
  0.005,
  1e15,
  1e308,
  -1e308,
  2 ** 31,
  2 ** 53 + 2,
  1.5,
  '',
  ' ',
  '1e2',
  'NaN',
  '\u0000',
  'x'.repeat(2000),
  [],
  [1, 2],
  [null],
  {},
  { a: { b: [1] } },
];

const nastyText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_TEXT) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
);
const nastyJson: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_JSON) },
  { weight: 1, arbitrary: nastyText },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> },
);
/** A value no scalar field accepts and joi never converts. */
const POISON: Json = { poison: [1] };

function operationsOf(openapi: Schema): Operation[] {
  const ops: Operation[] = [];
  for (const [template, methods] of Object.entries<Schema>(openapi.paths))
    for (const [method, op] of Object.entries<Schema>(methods))
      ops.push({
        method,
        template,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
      });
  return ops;
}

const isWrite = (op: Operation) => op.method !== 'get';
const scalarType = (schema: Schema | undefined) =>
  typeof schema?.type === 'string' && ['string', 'number', 'integer', 'boolean'].includes(schema.type);

/** A value of roughly the right type (so generated requests reach past the first check). */
function plausible(schema: Schema | undefined, ids: Ids): fc.Arbitrary<Json> {
  if (!schema) return nastyJson;
  if (schema.enum) return fc.constantFrom(...(schema.enum as Json[]));
  switch (Array.isArray(schema.type) ? 'any' : schema.type) {
    case 'integer':
      return fc.oneof(
        fc.integer({ min: -3, max: 50 }),
        fc.constantFrom(schema.minimum ?? 0, schema.maximum ?? 2 ** 31 - 1, (schema.maximum ?? 0) + 1),
      );
    case 'number':
      return fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constantFrom(0.01, 12.34, 0.001, 1e15));
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(plausible(schema.items, ids), { maxLength: 4 });
    case 'object':
      return objectOf(schema, ids, false);
    case 'string':
      if (schema.format === 'uuid') return fc.constantFrom(...ids.uuids, randomUUID());
      if (schema.format === 'date-time' || schema.maxLength === 40)
        return fc.constantFrom(
          '2026-01-01',
          '2025-06-30T12:00:00Z',
          '1900-01-01',
          '9999-12-30',
          '2026-11-23',
        );
      return fc.oneof(
        fc.string({ minLength: 1, maxLength: 20 }),
        fc.constantFrom(...ids.uuids, ...ids.products),
      );
    default:
      return nastyJson;
  }
}

function objectOf(schema: Schema, ids: Ids, poison: boolean): fc.Arbitrary<Json> {
  const props = Object.entries<Schema>(schema.properties ?? {});
  const poisonable = props.filter(([, s]) => scalarType(s) || s.type === 'array').map(([k]) => k);
  const fields = Object.fromEntries(
    props.map(([key, s]) => [key, fc.oneof({ weight: 2, arbitrary: plausible(s, ids) }, nastyJson)]),
  );
  return fc
    .record(
      {
        fields: fc.record(fields, { requiredKeys: [] }),
        extra: fc.dictionary(
          fc.constantFrom('id', 'createdBy', 'version', 'totalValue', 'constructor', 'role', 'unknown'),
          nastyJson,
          { maxKeys: 2 },
        ),
        poisonKey: poisonable.length > 0 ? fc.constantFrom(...poisonable) : fc.constant(undefined),
      },
      { requiredKeys: ['fields', 'extra', 'poisonKey'] },
    )
    .map(({ fields: f, extra, poisonKey }) => {
      const value: Record<string, Json> = { ...extra, ...(f as Record<string, Json>) };
      if (poison && poisonKey !== undefined) {
        const target = Object.fromEntries(props)[poisonKey];
        value[poisonKey] = target.type === 'array' ? [POISON] : POISON;
      }
      return value;
    });
}

interface Ids {
  uuids: string[];
  products: string[];
  jobs: string[];
}

/** A path value: mostly junk or ids that do not exist; real ids only for reads or poisoned writes. */
function pathValue(name: string, schema: Schema, ids: Ids, real: boolean): fc.Arbitrary<string> {
  const junk = fc.oneof(
    fc.constantFrom(
      randomUUID(),
      '00000000-0000-0000-0000-000000000000',
      '9223372036854775807',
      '9223372036854775808',
      '999999999999',
      '0',
      '-1',
      '1.5',
      '1e2',
      '%201',
      'abc',
      '%00',
      '%ZZ',
      '%2F..%2F',
      '%FF%FE',
      'SALE',
      'PRICE_CHANGE',
      'x'.repeat(2000),
    ),
    // Digits alone may spell a real product id (a write on it would change data): those come from `known`.
    fc
      .string({ maxLength: 10 })
      .filter(text => !/^\d+$/.test(text))
      .map(encodeURIComponent),
  );
  if (!real) return junk;
  const known =
    name === 'reason'
      ? (schema.enum as string[])
      : name === 'jobId'
        ? ids.jobs
        : schema.pattern
          ? ids.products
          : ids.uuids;
  return fc.oneof(fc.constantFrom(...known), junk);
}

/** A required query parameter set to something its schema refuses, whatever the route does next. */
function poisonedQueryValue(schema: Schema): string | undefined {
  if (schema.enum) return 'NOT_A_VALUE';
  if (schema.type === 'integer' || schema.type === 'number') return 'abc';
  if (schema.type === 'string' && schema.maxLength) return 'x'.repeat(schema.maxLength + 1);
  return undefined;
}

function planFor(opIndex: number, op: Operation, ids: Ids): fc.Arbitrary<Plan> {
  const queryParams = op.parameters.filter(p => p.in === 'query');
  const pathParams = op.parameters.filter(p => p.in === 'path');
  const poisonableQuery = queryParams.filter(p => poisonedQueryValue(p.schema) !== undefined);
  const bodyPoisonable = !!op.body;
  const queryEntry = fc.oneof(
    {
      weight: 6,
      arbitrary: queryParams.length
        ? fc.constantFrom(...queryParams).chain(p =>
            fc
              .oneof(
                {
                  weight: 2,
                  arbitrary: plausible(p.schema, ids).map(v =>
                    typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v),
                  ),
                },
                { weight: 1, arbitrary: nastyText },
              )
              .map(v => [p.name, v] as [string, string]),
          )
        : fc.constant(['lang', 'de'] as [string, string]),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom('__proto__', 'constructor', 'lang', 'a[b]', 'sort', 'page', 'x'.repeat(100)),
        nastyText,
      ),
    },
  );
  return fc
    .record({
      actor: fc.constantFrom<Actor>('admin', 'admin', 'user', 'user', 'anonymous'),
      realIds: fc.boolean(),
      query: fc.array(queryEntry, { maxLength: 5 }),
      // Arrays for scalars: the same key repeated.
      repeatKey: fc.boolean(),
      bodyShape: fc.oneof(
        { weight: 40, arbitrary: fc.constant('object') },
        { weight: 6, arbitrary: fc.constant('proto') },
        { weight: 6, arbitrary: fc.constant('notObject') },
        { weight: 4, arbitrary: fc.constant('none') },
        { weight: 3, arbitrary: fc.constantFrom('deep', 'deepField', 'badUtf8', 'malformed') },
        { weight: 1, arbitrary: fc.constant('huge') },
      ),
      notObject: fc.oneof(nastyJson, fc.constant<Json>([{}]), fc.constant<Json>('just a string')),
      bodyValue: op.body ? objectOf(op.body, ids, isWrite(op)) : fc.constant({}),
      contentType: fc.oneof(
        { weight: 12, arbitrary: fc.constant('application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/xml',
            'multipart/form-data; boundary=x',
            'application/json; charset=latin1',
            'application/json; charset=utf-16le',
            'application/json; charset=utf-32',
            'application/vnd.api+json',
            'application/merge-patch+json',
            '*/*',
            'application/json;;;',
          ),
        },
      ),
      headers: fc.array(
        fc.tuple(
          fc.constantFrom(
            'Accept-Language',
            'X-Correlation-Id',
            'If-Match',
            'Idempotency-Key',
            'Origin',
            'Cookie',
            'Accept',
            'Content-Encoding',
            'Authorization',
          ),
          fc.constantFrom(
            'de',
            'xx-YY;q=abc',
            '*',
            '"1"',
            'W/"abc"',
            `k-${randomUUID()}`,
            'https://evil.example',
            'SESSION=s%3Aforged.sig; SESSION =x',
            'gzip',
            'br',
            'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiIsInJvbGUiOiJST0xFX0FETUlOIn0.',
            'Basic YWRtaW46YWRtaW4xMjM=',
            'Bearer',
            'x'.repeat(300),
          ),
        ),
        { maxLength: 2 },
      ),
      broken: fc.oneof(
        { weight: 40, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('a\rb', 'a\nb', 'a\u0000b', '\rX-Injected: 1') },
      ),
      poisonQuery: fc.nat(),
    })
    .chain(r => {
      const writeNeedsPoison = isWrite(op) && r.realIds && pathParams.length > 0;
      const parserPoison = [
        'deep',
        'deepField',
        'huge',
        'badUtf8',
        'malformed',
        'notObject',
        'none',
      ].includes(r.bodyShape);
      // Real ids on a write only when the body (poisoned by objectOf) or a required parameter refuses it.
      const poisonWith: 'body' | 'query' | undefined = !writeNeedsPoison
        ? undefined
        : bodyPoisonable
          ? 'body'
          : poisonableQuery.length > 0
            ? 'query'
            : undefined;
      const realIds = r.realIds && (!isWrite(op) || poisonWith !== undefined);
      return fc.tuple(...pathParams.map(p => pathValue(p.name, p.schema, ids, realIds))).map(pathValues => {
        const query = [...r.query];
        if (r.repeatKey && query.length > 0) query.push([query[0][0], query[0][1]]);
        if (poisonWith === 'query') {
          const p = poisonableQuery[r.poisonQuery % poisonableQuery.length];
          query.push([p.name, poisonedQueryValue(p.schema)!]);
        }
        // A write with a body that no parser poison protects keeps its poisoned object shape.
        const shape =
          isWrite(op) && op.body && !parserPoison && r.bodyShape !== 'proto' ? 'object' : r.bodyShape;
        const plan: Plan = {
          op: opIndex,
          actor: r.actor,
          pathValues,
          query,
          headers: r.headers,
          contentType: r.contentType,
          brokenHeader: r.broken,
        };
        const sendsBody = !!op.body || r.bodyShape === 'deep' || r.bodyShape === 'huge';
        if (!sendsBody || shape === 'none') return plan;
        if (shape === 'object' || shape === 'proto')
          plan.body = { kind: 'json', value: r.bodyValue, protoKey: shape === 'proto' };
        else if (shape === 'notObject') plan.body = { kind: 'json', value: r.notObject, protoKey: false };
        else if (shape === 'malformed') plan.body = { kind: 'raw', text: '{"name": "x", ' };
        else plan.bodyBytes = shape;
        // A body of the wrong content type is never parsed: only safe where the route requires a body.
        if (isWrite(op) && !op.body) plan.contentType = 'application/json';
        return plan;
      });
    });
}

/** A poisoned write with a `__proto__` key must still carry its poisoned field: JSON text keeps both. */
function jsonText(value: Json, protoKey: boolean): string {
  const text = JSON.stringify(value) ?? 'null';
  if (!protoKey || !text.startsWith('{')) return text;
  const proto = '"__proto__": {"role": "ROLE_ADMIN", "isAdmin": true, "quantity": 5}';
  return text === '{}' ? `{${proto}}` : `{${proto}, ${text.slice(1)}`;
}

function bodyBytes(plan: Plan): Buffer | undefined {
  switch (plan.bodyBytes) {
    case 'deep':
      return Buffer.from('['.repeat(10_000) + ']'.repeat(10_000));
    case 'deepField':
      return Buffer.from(`{"name": ${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}, "quantity": [[[[]]]]}`);
    case 'huge':
      return Buffer.from(JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }));
    case 'badUtf8':
      return Buffer.concat([
        Buffer.from('{"name": "bad '),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('"}'),
      ]);
    default:
      if (!plan.body) return undefined;
      return Buffer.from(
        plan.body.kind === 'raw' ? plan.body.text : jsonText(plan.body.value, plan.body.protoKey),
      );
  }
}

interface Sent {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  ms: number;
}

function send(
  agent: Agent,
  port: number,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<Sent> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: method.toUpperCase(), path: url, headers, agent },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () =>
          resolve({
            method,
            url,
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            ms: Date.now() - started,
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(DEADLINE_MS, () => req.destroy(new Error(`no answer within ${DEADLINE_MS} ms`)));
    req.on('error', error => {
      // A server may refuse a huge body and close before reading it all (413 is already on the wire).
      if (
        (error as NodeJS.ErrnoException).code === 'EPIPE' ||
        (error as NodeJS.ErrnoException).code === 'ECONNRESET'
      )
        resolve({ method, url, status: -1, headers: {}, text: '', ms: Date.now() - started });
      else reject(error);
    });
    // Content-Length always: Node sends a GET or DELETE body unframed otherwise.
    if (body) req.setHeader('Content-Length', body.length);
    req.end(body);
  });
}

/** A request with a CR, LF or NUL inside a header value, written byte for byte. */
function sendBroken(port: number, method: string, url: string, value: string): Promise<Sent> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${DEADLINE_MS} ms`));
    }, DEADLINE_MS);
    socket.on('data', c => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = raw.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const headers = Object.fromEntries(
        head
          .split('\r\n')
          .slice(1)
          .map(l => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ method, url, status, headers, text: rest.join('\r\n\r\n'), ms: Date.now() - started });
    });
    socket.end(
      `${method.toUpperCase()} ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: ${value}\r\nConnection: close\r\n\r\n`,
    );
  });
}

const PRODUCT_PATHS = /^\/api\/(products(\/|$)|auth\/login$)/;

/** Row checksums of every data table (order-independent per table). */
async function checksums(): Promise<Record<string, string>> {
  const em = testApp().services.orm.em.fork();
  const tables = await em.execute<{ table_name: string }[]>(
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const sums: Record<string, string> = {};
  for (const { table_name: table } of tables) {
    if (IGNORED_TABLES.has(table)) continue;
    const rows = await em.execute<{ n: number; sum: string | null }[]>(
      `select count(*)::int as n, md5(string_agg(md5(t::text), '' order by md5(t::text))) as sum from "${table}" t`,
    );
    sums[table] = `${rows[0].n}:${rows[0].sum ?? ''}`;
  }
  return sums;
}

describe('S12: fuzz over every operation of the OpenAPI document', function () {
  this.timeout(240_000);
  // Whole-database reads (exports, unpaged lists) answer the same however many rows other suites left.
  ownDatabase('fuzz');
  let admin: TestUser;
  let user: TestUser;
  let ids: Ids;

  before(async () => {
    const services = testApp().services;
    admin = await createUser(services, 'ROLE_ADMIN', 'fuzz-admin');
    user = await createUser(services, 'ROLE_USER', 'fuzz-user');
    // Fixture data of every kind, written through the API: suppliers, items with history, products.
    const client = apiClient(testApp());
    const suppliers = [await newSupplier(client, admin.auth), await newSupplier(client, admin.auth)];
    const items = await inLanes(6, 3, i =>
      newItem(client, admin.auth, suppliers[i % 2].id, { quantity: i * 3, minimumQuantity: 5 }),
    );
    for (const item of items.slice(1, 4))
      await client
        .patch(`/api/inventory/${item.id}/quantity?delta=-1&reason=SALE`)
        .set('Authorization', user.auth)
        .expect(200);
    const products = await inLanes(4, 2, () => createProduct(admin));
    const rebuild = await client
      .post('/api/admin/reports/rebuild')
      .set('Authorization', admin.auth)
      .expect(202);
    // And the demo data (idempotent: nothing is created when another suite seeded it already).
    await seedDemoData(services.orm, services.config);
    // Draft orders from the current suggestions, once: a later call (the fuzz's, whose body may be empty and so
    // valid) finds every suggested item on an open order and creates nothing.
    await client.post('/api/replenishment/draft-orders').set('Authorization', admin.auth).send({});
    const em = services.orm.em.fork();
    const known = await em.execute<{ id: string; kind: string }[]>(
      `(select id::text, 'uuid' as kind from supplier order by created_at desc limit 20)
       union all (select id::text, 'uuid' from inventory_item order by created_at desc limit 40)
       union all (select id::text, 'product' from product order by id desc limit 20)`,
    );
    ids = {
      uuids: [
        ...suppliers.map(s => s.id),
        ...items.map(i => i.id),
        ...known.filter(k => k.kind === 'uuid').map(k => k.id),
      ],
      products: [
        ...products.map(p => String(p.id)),
        ...known.filter(k => k.kind === 'product').map(k => k.id),
      ],
      jobs: [rebuild.body.jobId],
    };
  });

  it(`When ${REQUESTS} generated requests hit all operations, then none answers >= 500, late, or off-contract, and no data changes`, async () => {
    await fuzz(testApp(), REQUESTS, SEED);
  });

  it('When the demo read-only mode opens the reads to anonymous callers, then 2,000 more requests hold the same', async () => {
    const demo = await startTestApp(
      { APP_DEMO_READONLY: 'true', DATABASE_URL: testDatabaseUrl() },
      { migrate: false },
    );
    try {
      await fuzz(demo, 2000, SEED + 1);
    } finally {
      await demo.close();
    }
  });

  /** Generates `count` requests, sends them over keep-alive connections and checks every answer. */
  async function fuzz(app: TestApp, count: number, seed: number): Promise<void> {
    const ops = operationsOf(app.openapi);
    expect(ops.length).to.be.at.least(60);
    // The browser sign-in routes are not in the document (redirects, no JSON): fuzz them too.
    ops.push(
      { method: 'get', template: '/oauth2/authorization/{provider}', parameters: [] },
      { method: 'get', template: '/login/oauth2/code/{provider}', parameters: [] },
    );
    const plans = fc.sample(
      fc.nat({ max: ops.length - 1 }).chain(i => planFor(i, ops[i], ids)),
      { numRuns: count, seed },
    );
    const auth: Record<Actor, string | undefined> = {
      admin: admin.auth,
      user: user.auth,
      anonymous: undefined,
    };
    const before = await checksums();
    const agent = new Agent({ keepAlive: true, maxSockets: LANES });
    const port = app.server.port;
    const failures: string[] = [];
    const perOperation = new Map<string, number>();
    const statuses = new Map<number, number>();
    let slowest = 0;
    const started = Date.now();

    await inLanes(plans.length, LANES, async i => {
      const plan = plans[i];
      const op = ops[plan.op];
      let path = op.template;
      const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map(m => m[1]);
      names.forEach((name, k) => {
        path = path.replace(`{${name}}`, plan.pathValues[k] ?? 'google');
      });
      const search = plan.query
        .map(
          ([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replace(/%25(?=[0-9A-F]{2})/g, '%')}`,
        )
        .join('&');
      const url = search ? `${path}?${search}` : path;
      const label = `#${i} ${op.method.toUpperCase()} ${url.slice(0, 200)} as ${plan.actor}`;
      try {
        let res: Sent;
        if (plan.brokenHeader) {
          res = await sendBroken(port, op.method, url, plan.brokenHeader);
          if (res.status !== 400) failures.push(`${label}: broken header answered ${res.status}`);
        } else {
          // A junk Authorization header stays only on anonymous requests.
          const headers: Record<string, string> = Object.fromEntries(plan.headers);
          const token = auth[plan.actor];
          if (token) headers.Authorization = token;
          const body = bodyBytes(plan);
          if (body) headers['Content-Type'] = plan.contentType ?? 'application/json';
          res = await send(agent, port, op.method, url, headers, body);
        }
        perOperation.set(
          `${op.method} ${op.template}`,
          (perOperation.get(`${op.method} ${op.template}`) ?? 0) + 1,
        );
        slowest = Math.max(slowest, res.ms);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === -1) return; // refused mid-upload (huge body); the server stayed up
        if (res.status >= 500 || res.status < 100)
          failures.push(`${label}: status ${res.status} ${res.text.slice(0, 300)}`);
        if (res.ms > DEADLINE_MS) failures.push(`${label}: answered after ${res.ms} ms`);
        if (res.status >= 400) {
          let body: Record<string, unknown>;
          try {
            body = JSON.parse(res.text) as Record<string, unknown>;
          } catch {
            failures.push(`${label}: ${res.status} without a JSON body: ${res.text.slice(0, 100)}`);
            return;
          }
          const pathOnly = url.split('?')[0];
          if (PRODUCT_PATHS.test(pathOnly)) {
            if (body.success !== false || body.status !== res.status)
              failures.push(`${label}: not a product error envelope: ${res.text.slice(0, 200)}`);
          } else if (body.error === undefined || typeof body.message !== 'string' || !body.correlationId)
            failures.push(`${label}: not the central error body: ${res.text.slice(0, 200)}`);
          if (/\bselect\b|\bstack\b|\.ts:\d|node_modules/i.test(res.text))
            failures.push(`${label}: internals leak: ${res.text.slice(0, 200)}`);
        }
        if (
          !plan.brokenHeader &&
          op.parameters !== undefined &&
          !op.template.startsWith('/oauth2') &&
          !op.template.startsWith('/login/')
        ) {
          let parsed: unknown = undefined;
          try {
            parsed = res.text ? JSON.parse(res.text) : undefined;
          } catch {
            parsed = res.text;
          }
          try {
            app.conformance.check(op.method, url, {
              status: res.status,
              headers: res.headers,
              body: parsed,
            } as never);
          } catch (error) {
            failures.push(`${label}: ${(error as Error).message.slice(0, 300)}`);
          }
        }
      } catch (error) {
        failures.push(`${label}: ${(error as Error).message}`);
      }
    });
    agent.destroy();
    const elapsed = Date.now() - started;
    console.log(
      `      fuzz: ${plans.length} requests over ${perOperation.size} operations in ${elapsed} ms, slowest ${slowest} ms (seed ${seed}); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    );
    if (failures.length > 0) console.log(failures.slice(0, 40).join('\n'));
    expect(failures.length, `${failures.length} failures, first: ${failures[0]}`).to.equal(0);
    expect(perOperation.size, 'every operation was exercised').to.equal(ops.length);
    expect(await checksums(), 'no table changed').to.deep.equal(before);
  }
});
