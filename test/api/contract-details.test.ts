import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { apiClient, startTestApp, type TestApp } from '../support/test-app.js';

/** Issue 13, "Contract details": what the contract now states explicitly. */
describe('Contract details (issue 13)', () => {
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
  });

  describe('N7/N8 filtered stock updates', () => {
    const get = (query: string) =>
      api().get(`/api/analytics/stock-updates?${query}`).set('Authorization', user.auth);
    const post = (body: Record<string, unknown>) =>
      api().post('/api/analytics/stock-updates/query').set('Authorization', user.auth).send(body);

    it('When minChange > maxChange in the query or the body, then 400 "minChange must be <= maxChange" (German too)', async () => {
      const q = await get('minChange=5&maxChange=-5').expect(400);
      expect(q.body).to.include({ error: 'bad_request', message: 'minChange must be <= maxChange' });
      const b = await post({ minChange: 3, maxChange: 2 }).expect(400);
      expect(b.body.message).to.equal('minChange must be <= maxChange');
      const de = await get('minChange=1&maxChange=0&lang=de').expect(400);
      expect(de.body.message).to.equal('minChange muss <= maxChange sein');
      await get('minChange=2&maxChange=2').expect(200);
      await post({ minChange: -1, maxChange: null }).expect(200);
    });

    it('When startDate is after endDate (dates or date-times, query or body), then 400 "startDate must be on or before endDate"', async () => {
      for (const [startDate, endDate] of [
        ['2026-01-03', '2026-01-02'],
        ['2026-01-03T00:00:00Z', '2026-01-02'],
        ['2026-01-03', '2026-01-02T23:59:59Z'],
      ]) {
        const q = await get(`startDate=${startDate}&endDate=${endDate}`).expect(400);
        expect(q.body.message).to.equal('startDate must be on or before endDate');
        const b = await post({ startDate, endDate }).expect(400);
        expect(b.body.message).to.equal('startDate must be on or before endDate');
      }
      const de = await get('startDate=2026-01-03&endDate=2026-01-02&lang=de').expect(400);
      expect(de.body.message).to.equal('startDate muss am oder vor endDate liegen');
    });

    it('When startDate lies within the day of a date-only endDate, then the range is valid', async () => {
      await get('startDate=2026-01-02T12:00:00Z&endDate=2026-01-02').expect(200);
      await post({ startDate: '2026-01-02', endDate: '2026-01-02' }).expect(200);
    });
  });

  describe('I4 PUT of a missing item', () => {
    it('When the item does not exist, then 404 even if the body is incomplete or invalid', async () => {
      const missing = '/api/inventory/00000000-0000-4000-8000-00000000abcd';
      for (const body of [{}, { quantity: 1 }, { name: '', price: -1 }]) {
        const res = await api().put(missing).set('Authorization', admin.auth).send(body).expect(404);
        expect(res.body.error).to.equal('not_found');
      }
    });

    it('When the item exists and the body is incomplete, then still 400 "Item name is required"', async () => {
      const supplier = await newSupplier(api(), admin.auth);
      const item = await newItem(api(), admin.auth, supplier.id);
      const res = await api()
        .put(`/api/inventory/${item.id}`)
        .set('Authorization', admin.auth)
        .send({ quantity: 1 })
        .expect(400);
      expect(res.body.fieldErrors.name).to.equal('Item name is required');
    });

    it('When a USER or nobody asks about a missing item, then 403 / 401 (no existence leak before the role check)', async () => {
      const missing = '/api/inventory/00000000-0000-4000-8000-00000000abce';
      await api().put(missing).set('Authorization', user.auth).send({}).expect(403);
      await api().put(missing).send({}).expect(401);
    });
  });

  describe('X2/X3 in demo mode', () => {
    let demo: TestApp;
    before(async () => {
      demo = await startTestApp({ APP_DEMO_READONLY: 'true' }, { migrate: false });
    });
    after(async () => demo.close());

    it('When anonymous in demo mode, then by-employee and employee-changes answer 200', async () => {
      const client = apiClient(demo);
      await client.get('/api/analytics/by-employee').expect(200);
      await client.get('/api/analytics/employee-changes').expect(200);
    });

    it('When a signed-in USER asks in demo mode, then still 403; an ADMIN gets 200', async () => {
      const client = apiClient(demo);
      await client.get('/api/analytics/by-employee').set('Authorization', user.auth).expect(403);
      await client.get('/api/analytics/employee-changes').set('Authorization', user.auth).expect(403);
      await client.get('/api/analytics/by-employee').set('Authorization', admin.auth).expect(200);
    });

    it('When not in demo mode, then anonymous callers still get 401', async () => {
      await api().get('/api/analytics/by-employee').expect(401);
      await api().get('/api/analytics/employee-changes').expect(401);
    });
  });
});
