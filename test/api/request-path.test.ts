import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';

/**
 * What every request passes before its route (api/routing/enter-api-first.ts) and the validation memories
 * (api/middleware/validate.ts): the answers are those of a request validated and dispatched for the first time.
 */
describe('The request path', () => {
  let admin: TestUser;
  let user: TestUser;
  let supplierId: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    supplierId = (await newSupplier(api(), admin.auth)).id;
  });

  it('When the same query string comes again, then it is validated as the first time, invalid ones every time', async () => {
    const item = await newItem(api(), admin.auth, supplierId, { quantity: 10 });
    const adjust = (query: string) =>
      api().patch(`/api/inventory/${item.id}/quantity?${query}`).set('Authorization', user.auth);
    for (const expected of [11, 12, 13]) {
      const res = await adjust('delta=1&reason=RESTOCK').expect(200);
      expect(res.body.quantity).to.equal(expected);
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(Number(res.headers['content-length'])).to.equal(Buffer.byteLength(res.text));
      expect(res.headers.etag).to.equal(`"${res.body.version}"`);
    }
    // A query whose first answer was a 400 is a 400 again, with the field named, however often it comes.
    for (let i = 0; i < 3; i++) {
      const zero = await adjust('delta=0&reason=RESTOCK').expect(400);
      expect(JSON.stringify(zero.body)).to.contain('delta');
      await adjust('delta=-100&reason=SALE').expect(422);
    }
    // The converted values are each request's own: `expectedQuantity` is compared as the number it names.
    await adjust('delta=1&reason=RESTOCK&expectedQuantity=13').expect(200);
    await adjust('delta=1&reason=RESTOCK&expectedQuantity=13').expect(412);
    const read = await api().get(`/api/inventory/${item.id}`).set('Authorization', user.auth).expect(200);
    expect(read.body.quantity).to.equal(14);
    // A read with and without a query: the same route, both validated (a bad `asOf` is a 400 every time).
    for (let i = 0; i < 2; i++) {
      await api()
        .get(`/api/inventory/${item.id}?asOf=not-a-date`)
        .set('Authorization', user.auth)
        .expect(400);
      await api().get(`/api/inventory/${item.id}`).set('Authorization', user.auth).expect(200);
    }
  });

  it('When requests pass the API list, then the metrics name routes, errors reach the error handler and the rest reaches Express', async () => {
    const item = await newItem(api(), admin.auth, supplierId);
    await api().get(`/api/inventory/${item.id}`).set('Authorization', user.auth).expect(200);
    // An error of the list before any route (a malformed body) in the route family's shape.
    const malformed = await api()
      .patch(`/api/inventory/${item.id}/quantity?delta=1&reason=RESTOCK`)
      .set('Authorization', user.auth)
      .set('Content-Type', 'application/json')
      .send('{"broken":')
      .expect(400);
    expect(malformed.body).to.have.property('status', 400);
    const product = await api().get('/api/products/no-such-route/deeper').expect(404);
    expect(product.body).to.have.property('success', false);
    await api().get('/api/no-such-route').expect(404);
    // Not API routes: Express's own layers, with the list's headers.
    const document = await api().get('/api/openapi.json').expect(200);
    expect(document.headers['x-correlation-id']).to.be.a('string');
    expect(document.headers['cache-control']).to.equal('no-store');
    const metrics = await api().get('/metrics').expect(200);
    expect(metrics.text).to.match(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/inventory\/:id",status_code="200"\}/,
    );
    expect(metrics.text).to.match(/route="unmatched",status_code="404"/);
    expect(metrics.text).not.to.contain('undefined/api');
  });
});
