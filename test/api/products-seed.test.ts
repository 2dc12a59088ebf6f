import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { sql, truncateProducts, unique } from '../support/products.js';
import { DemoDataRefusedError, seedDemoData } from '../../scripts/seed-demo.js';
import { prepareData } from '../../scripts/prepare-data.js';
import type { Services } from '../../config/services.js';

const login = async (username: string, password: string) =>
  (await api().post('/api/auth/login').send({ username, password }).expect(200)).body.data as string;

describe('Demo data (npm run seed:demo and the start command)', () => {
  beforeEach(truncateProducts);

  it('When seeded twice, then the 8 demo products (2655.00, three low-stock) and the two demo accounts exist once', async () => {
    const { orm, config } = testApp().services;
    const first = await seedDemoData(orm, config);
    expect(first.products).to.equal(8);
    const second = await seedDemoData(orm, config);
    expect(second).to.deep.equal({ users: 0, products: 0, inventory: 0 });

    const admin = `Bearer ${await login('admin', 'admin123')}`;
    const user = `Bearer ${await login('user', 'user123')}`;
    const total = await api().get('/api/products/total-stock-value').set('Authorization', user).expect(200);
    expect(total.body.data).to.equal(2655);
    const low = await api().get('/api/products/low-stock').set('Authorization', user).expect(200);
    expect(low.body.map((p: { name: string }) => p.name)).to.deep.equal([
      'Gamma Tool',
      'Delta Device',
      'Theta Machine',
    ]);
    const all = await api().get('/api/products').set('Authorization', user).expect(200);
    expect(all.body).to.have.length(8);
    for (const p of all.body) expect(p.sku).to.match(/^SKU-[A-Z0-9]{8}$/);

    // Roles: the demo admin may create, the demo user may not.
    await api()
      .post('/api/products')
      .set('Authorization', admin)
      .send({ name: unique(), quantity: 1, price: 1 })
      .expect(201);
    await api()
      .post('/api/products')
      .set('Authorization', user)
      .send({ name: unique(), quantity: 1, price: 1 })
      .expect(403);
    const [hash] = await sql<{ password_hash: string }>(
      "select password_hash from app_user where username = 'admin'",
    );
    expect(hash.password_hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('When NODE_ENV is production, then seeding is refused and nothing is created', async () => {
    const { orm } = testApp().services;
    let error: unknown;
    try {
      await seedDemoData(orm, { nodeEnv: 'production' });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(DemoDataRefusedError);
    expect(await sql('select id from product')).to.deep.equal([]);
  });

  it('When the start command prepares data, then it seeds only an empty product table and only when asked', async () => {
    const services = testApp().services;
    const withSeed = (
      seedDemoData: boolean,
      nodeEnv: Services['config']['nodeEnv'] = 'development',
    ): Services => ({ ...services, config: { ...services.config, seedDemoData, nodeEnv } });

    await prepareData(withSeed(false));
    expect(await sql('select id from product')).to.have.length(0);
    await prepareData(withSeed(true, 'production'));
    expect(await sql('select id from product')).to.have.length(0);
    await prepareData(withSeed(true));
    expect(await sql('select id from product')).to.have.length(8);

    await truncateProducts();
    const kept = unique('Kept');
    await sql("insert into product (name, quantity, price, sku) values (?, 1, 1, 'SKU-KEPT0001')", [kept]);
    await prepareData(withSeed(true));
    expect((await sql<{ name: string }>('select name from product')).map(r => r.name)).to.deep.equal([kept]);
  });
});
