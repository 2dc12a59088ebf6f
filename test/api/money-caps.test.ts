import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createUser, type TestUser } from '../support/users.js';
import { newSupplier } from '../support/inventory.js';
import { sql, unique } from '../support/products.js';

/** The caps of the contract: 999,999 x 9,999,999.99 is the largest total with cents in it. */
const MAX_QUANTITY = 999999;
const TOP_PRICE = 9999999.99;
const TOP_TOTAL = '9999989990000.01';

/** The JSON text of a response: totals are compared as the client's parser receives them, digit by digit. */
const jsonField = (text: string, field: string): string | undefined =>
  new RegExp(`"${field}":(-?[0-9.eE+]+)`).exec(text)?.[1];

describe('Money exact to the cent: prices capped at 10,000,000.00 and quantities at 999,999', () => {
  let admin: TestUser;
  let user: TestUser;
  let supplierId: string;

  before(async () => {
    admin = await createUser(testApp().services, 'ROLE_ADMIN', 'admin');
    user = await createUser(testApp().services, 'ROLE_USER');
    supplierId = (await newSupplier(api(), admin.auth)).id;
  });

  it('When an item has the largest quantity and price, then its totalValue is exact in the JSON of every read, and two of them sum exactly in N2', async () => {
    const supplier = (await newSupplier(api(), admin.auth)).id;
    const ids: string[] = [];
    for (const name of [unique('Top item'), unique('Top item')]) {
      const created = await api()
        .post('/api/inventory')
        .set('Authorization', admin.auth)
        .send({ name, quantity: MAX_QUANTITY, price: TOP_PRICE, supplierId: supplier })
        .expect(201);
      expect(jsonField(created.text, 'totalValue')).to.equal(TOP_TOTAL);
      ids.push(created.body.id);
    }
    const one = await api().get(`/api/inventory/${ids[0]}`).set('Authorization', user.auth).expect(200);
    expect(jsonField(one.text, 'price')).to.equal('9999999.99');
    expect(jsonField(one.text, 'totalValue')).to.equal(TOP_TOTAL);
    const perSupplier = await api()
      .get(`/api/analytics/stock-per-supplier`)
      .set('Authorization', user.auth)
      .expect(200);
    const row = new RegExp(`"supplierId":"${supplier}"[^}]*"totalValue":([0-9.]+)`).exec(perSupplier.text);
    expect(row?.[1]).to.equal('19999979980000.02');

    const atCap = await api()
      .patch(`/api/inventory/${ids[1]}/price?price=10000000`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(jsonField(atCap.text, 'totalValue')).to.equal('9999990000000');
  });

  it('When an item price is above 10,000,000.00, then 400 with the documented message (English and German) and nothing is stored', async () => {
    const name = unique('Too dear');
    const create = await api()
      .post('/api/inventory')
      .set('Authorization', admin.auth)
      .send({ name, quantity: 1, price: 10000000.01, supplierId })
      .expect(400);
    expect(create.body.fieldErrors).to.deep.equal({ price: 'Price cannot exceed 10000000.00' });
    const german = await api()
      .post('/api/inventory?lang=de')
      .set('Authorization', admin.auth)
      .send({ name, quantity: 1, price: 10000000.01, supplierId })
      .expect(400);
    expect(german.body.fieldErrors).to.deep.equal({ price: 'Preis darf 10000000.00 nicht überschreiten' });
    expect(await sql('select 1 from inventory_item where name = ?', [name])).to.have.length(0);

    const item = await api()
      .post('/api/inventory')
      .set('Authorization', admin.auth)
      .send({ name, quantity: 2, price: 5, supplierId })
      .expect(201);
    for (const price of ['10000000.01', '99999999.99', '9999999999.99']) {
      const res = await api()
        .patch(`/api/inventory/${item.body.id}/price?price=${price}`)
        .set('Authorization', user.auth)
        .expect(400);
      expect(res.body.messageKey).to.equal('inventory.item.price.max');
    }
    await api()
      .put(`/api/inventory/${item.body.id}`)
      .set('Authorization', admin.auth)
      .send({ name, quantity: 2, price: 12345678, supplierId })
      .expect(400);
    const stored = await api()
      .get(`/api/inventory/${item.body.id}`)
      .set('Authorization', user.auth)
      .expect(200);
    expect(stored.body).to.include({ price: 5, totalValue: 10, version: 1 });
  });

  it('When a product has the largest quantity and price, then its totalValue and the total stock value are exact in the JSON', async () => {
    const created = await api()
      .post('/api/products')
      .set('Authorization', admin.auth)
      .send({ name: unique('Top product'), quantity: MAX_QUANTITY, price: TOP_PRICE })
      .expect(201);
    expect(jsonField(created.text, 'totalValue')).to.equal(TOP_TOTAL);
    const total = await api()
      .get('/api/products/total-stock-value')
      .set('Authorization', user.auth)
      .expect(200);
    const [expected] = await sql<{ total: string }>(
      `select trim(trailing '.' from trim(trailing '0' from sum(quantity * price)::text)) as total from product`,
    );
    expect(jsonField(total.text, 'data')).to.equal(expected.total);
  });

  it('When a product quantity is above 999,999 or its price above 10,000,000.00, then 400 on every write path, nothing stored', async () => {
    const name = unique('Capped');
    for (const [body, message] of [
      [{ quantity: 1000000, price: 1 }, 'Quantity cannot exceed 999999'],
      [{ quantity: 1, price: 10000000.01 }, 'Price cannot exceed 10000000.00.'],
    ] as const) {
      const res = await api()
        .post('/api/products')
        .set('Authorization', admin.auth)
        .send({ name, ...body })
        .expect(400);
      expect(res.body.message).to.equal(message);
    }
    expect(await sql('select 1 from product where name = ?', [name])).to.have.length(0);

    const product = await api()
      .post('/api/products')
      .set('Authorization', admin.auth)
      .send({ name, quantity: 3, price: 2 })
      .expect(201);
    const id = product.body.id as number;
    await api()
      .put(`/api/products/${id}/quantity`)
      .set('Authorization', user.auth)
      .send({ quantity: 1000000 })
      .expect(400);
    await api()
      .put(`/api/products/${id}/price`)
      .set('Authorization', user.auth)
      .send({ price: 10000000.01 })
      .expect(400);
    await api()
      .put(`/api/products/${id}`)
      .set('Authorization', admin.auth)
      .send({ quantity: 1000000 })
      .expect(400);
    const batch = await api()
      .put('/api/products/stock/batch')
      .set('Authorization', user.auth)
      .send({ updates: [{ productId: id, quantity: 1000000 }] })
      .expect(400);
    expect(batch.body.details).to.deep.include({
      field: 'updates[0].quantity',
      message: 'Quantity cannot exceed 999999',
      index: 0,
    });
    const [stored] = await sql<{ quantity: number; price: string }>(
      'select quantity, price::text as price from product where id = ?',
      [id],
    );
    expect(stored).to.deep.equal({ quantity: 3, price: '2.00' });
  });

  it('When a write path bypasses validation, then the database refuses values beyond the caps', async () => {
    const item = await api()
      .post('/api/inventory')
      .set('Authorization', admin.auth)
      .send({ name: unique('Raw'), quantity: 1, price: 1, supplierId })
      .expect(201);
    const product = await api()
      .post('/api/products')
      .set('Authorization', admin.auth)
      .send({ name: unique('Raw'), quantity: 1, price: 1 })
      .expect(201);
    for (const [statement, id] of [
      ['update inventory_item set price = 10000000.01 where id = ?', item.body.id],
      ['update inventory_item set quantity = 1000000 where id = ?', item.body.id],
      ['update product set quantity = 1000000 where id = ?', product.body.id],
      ['update product set price = 10000000.01 where id = ?', product.body.id],
    ]) {
      const error = await sql(statement as string, [id]).then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
      expect(error?.code, statement as string).to.equal('23514');
    }
  });
});
