import { expect } from 'chai';
import fc from 'fast-check';
import { api } from '../setup/hooks.js';
import { createProduct, productActors, type ProductActors } from '../support/products.js';

const ROUTES: { method: 'get' | 'post' | 'put' | 'delete'; path: string }[] = [
  { method: 'get', path: '/api/products' },
  { method: 'get', path: '/api/products/paged' },
  { method: 'get', path: '/api/products/search' },
  { method: 'get', path: '/api/products/low-stock' },
  { method: 'get', path: '/api/products/total-stock-value' },
  { method: 'get', path: '/api/products/{id}' },
  { method: 'post', path: '/api/products' },
  { method: 'put', path: '/api/products/{id}' },
  { method: 'put', path: '/api/products/{id}/quantity' },
  { method: 'put', path: '/api/products/{id}/price' },
  { method: 'put', path: '/api/products/{id}/name' },
  { method: 'put', path: '/api/products/stock/batch' },
  { method: 'delete', path: '/api/products/{id}' },
  { method: 'delete', path: '/api/products' },
];

const KEYS = [
  'name',
  'quantity',
  'price',
  'purchasePrice',
  'sku',
  'category',
  'description',
  'updates',
  'ids',
];
const QUERY_KEYS = ['page', 'size', 'limit', 'sortBy', 'order', 'name', 'q', 'lang'];

const nasty = fc.oneof(
  fc.constantFrom(
    null,
    true,
    0,
    -1,
    0.001,
    1e308,
    -1e308,
    2 ** 63,
    Number.MAX_SAFE_INTEGER + 2,
    'NaN',
    'Infinity',
    '-0',
    '1e400',
    '',
    ' ',
    '%',
    '_',
    '\\',
    "' or 1=1 --",
    '\u0000',
    '\u202e',
    'x'.repeat(2000),
  ),
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.array(fc.oneof(fc.integer(), fc.string(), fc.constant(null)), { maxLength: 5 }),
);

const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nasty },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc.array(fc.record({ productId: nasty, quantity: nasty, id: nasty }, { requiredKeys: [] }), {
      maxLength: 4,
    }),
  },
);

const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...KEYS, '__proto__', 'constructor', 'id', 'totalValue'), value, {
    maxKeys: 5,
  }),
  fc.jsonValue({ maxDepth: 2 }),
);

const id = fc.oneof(
  fc.constantFrom('1', '0', '-1', '1.5', 'abc', '99999999999999999999', '9223372036854775807', '%2F', ' '),
  fc.nat().map(String),
  fc.string({ maxLength: 12 }),
);

const query = fc.dictionary(fc.constantFrom(...QUERY_KEYS), nasty.map(String), { maxKeys: 4 });

describe('Product API: malformed input never produces a 500 (fast-check)', function () {
  this.timeout(120000);
  let actors: ProductActors;
  let productId: number;

  before(async () => {
    actors = await productActors();
    productId = (await createProduct(actors.admin)).id;
  });

  it('When 400 random requests hit every product route, then every answer is < 500 and documented', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof(id, fc.constant(String(productId))),
        body,
        query,
        fc.boolean(),
        async (route, rawId, payload, params, asAdmin) => {
          const path = route.path.replace('{id}', encodeURIComponent(rawId));
          const search = new URLSearchParams(params).toString();
          const url = search ? `${path}?${search}` : path;
          const req = api()
            [route.method](url)
            .set('Authorization', asAdmin ? actors.admin.auth : actors.user.auth);
          const res =
            route.method === 'get'
              ? await req
              : await req.set('Content-Type', 'application/json').send(JSON.stringify(payload) ?? 'null');
          expect(res.status, `${route.method} ${url} ${JSON.stringify(payload)?.slice(0, 300)}`).to.be.below(
            500,
          );
          if (res.status >= 400) {
            expect(res.body.success).to.equal(false);
            expect(JSON.stringify(res.body)).not.to.match(/\bselect\b|stack|\.ts:|node_modules/i);
          }
        },
      ),
      { numRuns: 400, seed: 20261122 },
    );
  });

  it('When text carries NUL characters (PostgreSQL cannot store them), then 400, not a database error', async () => {
    const search = await api()
      .get('/api/products/search?q=%00')
      .set('Authorization', actors.user.auth)
      .expect(400);
    expect(search.body.message).to.equal('Text must not contain NUL characters.');
    const create = await api()
      .post('/api/products')
      .set('Authorization', actors.admin.auth)
      .send({ name: 'a\u0000b', quantity: 1, price: 1, description: 'x\u0000' })
      .expect(400);
    expect(create.body.details.map((d: { field: string }) => d.field)).to.deep.equal(['name', 'description']);
  });

  it('When bodies are not JSON or carry a wrong content type, then 400/415 in the product envelope', async () => {
    for (const [type, text] of [
      ['application/json', '{"quantity": '],
      ['application/json', '[1,2'],
      ['application/json', '"just a string"'],
      ['application/json', '12'],
      ['text/plain', 'quantity=1'],
      ['application/x-www-form-urlencoded', 'quantity=1'],
      ['application/json; charset=latin-9', '{"quantity": 1}'],
    ]) {
      const res = await api()
        .put(`/api/products/${productId}/quantity`)
        .set('Authorization', actors.user.auth)
        .set('Content-Type', type)
        .send(text);
      expect(res.status, `${type} ${text}`).to.be.oneOf([400, 415]);
      expect(res.body.success).to.equal(false);
    }
  });
});
