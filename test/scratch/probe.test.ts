import { api, testApp } from '../setup/hooks.js';
import { createUser } from '../support/users.js';
import { newSupplier, newItem } from '../support/inventory.js';

describe('probe', () => {
  it('probe', async () => {
    const admin = await createUser(testApp().services, 'ROLE_ADMIN');
    const deep = '['.repeat(6000) + ']'.repeat(6000);
    for (const [m, url, body] of [
      ['post', '/api/auth/login', deep],
      ['post', '/api/auth/login', `{"username": ${deep}, "password":"x"}`],
      ['post', '/api/auth/login', `{"username": "${deep}", "password":"x"}`],
      ['post', '/api/inventory', `{"name": ${deep}}`],
      ['post', '/api/inventory', deep],
      ['post', '/api/products', `{"name": ${deep}}`],
    ] as const) {
      const res = await (api() as any)[m](url).set('Authorization', admin.auth).set('Content-Type', 'application/json').send(body).ok(() => true);
      console.log(url, res.status, JSON.stringify(res.body).slice(0, 200));
    }
    for (const q of ['/api/stock-history/search?startDate=-271821-04-20', '/api/stock-history/search?startDate=%2B010000-01-01T00:00:00Z', '/api/stock-history/search?startDate=-004714-01-01', '/api/analytics/stock-updates?endDate=9999-12-31', '/api/products/paged?page=1e2', '/api/products/paged?size=5.', '/api/items?size=%205', '/api/items?page=-0']) {
      const res = await api().get(q).set('Authorization', admin.auth).ok(() => true);
      console.log(q, res.status, JSON.stringify(res.body).slice(0, 200));
    }
    const s = await newSupplier(api(), admin.auth);
    const it = await newItem(api(), admin.auth, s.id, { quantity: 999990 });
    const r = await api().patch(`/api/inventory/${it.id}/quantity?delta=59&reason=RESTOCK`).set('Authorization', admin.auth).ok(() => true);
    console.log('patch', r.status, JSON.stringify(r.body).slice(0, 200));
    const p = await api().post('/api/products').set('Authorization', admin.auth).send({ name: 'x1e15', quantity: 1, price: 1e15 }).ok(() => true);
    console.log('price', p.status, JSON.stringify(p.body).slice(0, 300));
  });
});
