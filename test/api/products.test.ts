import { expect } from 'chai';
import { api } from '../setup/hooks.js';
import {
  createProduct,
  expectProductError,
  productActors,
  sql,
  unique,
  type ProductActors,
} from '../support/products.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('Product API: records, create, get, partial update, delete', () => {
  let actors: ProductActors;
  before(async () => {
    actors = await productActors();
  });

  describe('create', () => {
    it('When an ADMIN creates with `price`, then 201 bare product with both spellings, sku, totalValue and Location', async () => {
      const name = unique('Widget');
      const res = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .send({ name, quantity: 3, price: 19.99, category: 'Tools', description: 'A widget' })
        .expect(201);
      const p = res.body;
      expect(p).to.include({
        name,
        quantity: 3,
        price: 19.99,
        purchasePrice: 19.99,
        totalValue: 59.97,
        category: 'Tools',
        description: 'A widget',
      });
      expect(p.id).to.be.a('number');
      expect(p.sku).to.match(/^SKU-[A-Z0-9]{8}$/);
      expect(p.createdAt).to.match(ISO);
      expect(p.lastUpdated).to.equal(p.updatedAt);
      expect(res.headers.location).to.equal(`/api/products/${p.id}`);
    });

    it('When a client sends `purchasePrice` and its own sku, then both are kept', async () => {
      const p = await createProduct(actors.admin, {
        price: undefined,
        purchasePrice: 2.5,
        sku: unique('MY').replace(' ', '-'),
      });
      expect(p).to.include({ price: 2.5, purchasePrice: 2.5 });
      expect(p.sku).to.match(/^MY-/);
      expect(p.category).to.equal(null);
      expect(p.description).to.equal(null);
    });

    it('When the sku is blank or null, then one is generated', async () => {
      for (const sku of ['', '   ', null]) {
        const p = await createProduct(actors.admin, { sku });
        expect(p.sku).to.match(/^SKU-[A-Z0-9]{8}$/);
      }
    });

    it('When price and purchasePrice are both given and equal, then accepted; different, then 400', async () => {
      await createProduct(actors.admin, { price: 4, purchasePrice: 4 });
      const res = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .send({ name: unique(), quantity: 1, price: 4, purchasePrice: 5 })
        .expect(400);
      expectProductError(res.body, 400, 'price and purchasePrice must be equal when both are given.');
      expect(res.body.error).to.equal('VALIDATION_ERROR');
    });

    it('When every field is wrong, then 400 VALIDATION_ERROR lists every field with the contract texts', async () => {
      const res = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .send({ name: '   ', quantity: -1, price: 0, sku: 'x'.repeat(51), category: 7 })
        .expect(400);
      expect(res.body.error).to.equal('VALIDATION_ERROR');
      expect(res.body.data).to.deep.equal({
        name: 'Name is required and cannot be empty.',
        quantity: 'Quantity cannot be negative.',
        price: 'Price must be greater than 0.',
        sku: 'SKU cannot exceed 50 characters.',
        category: 'Category must be a string.',
      });
      expect(res.body.details).to.have.length(5);
      expect(res.body.details[0]).to.deep.equal({
        field: 'name',
        message: 'Name is required and cannot be empty.',
      });
    });

    it('When price and quantity are missing or null, then the "missing or null" messages', async () => {
      const res = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .send({ name: unique(), quantity: null })
        .expect(400);
      expect(res.body.data).to.deep.equal({
        quantity: 'Quantity field is missing or null.',
        price: 'Price field is missing or null.',
      });
    });

    it('When numbers have the wrong type or are huge, then 400 (never 500)', async () => {
      for (const body of [
        { quantity: 'many', price: 1, msg: 'Quantity must be a valid integer.' },
        { quantity: 1.5, price: 1, msg: 'Quantity must be a valid integer.' },
        { quantity: 1e20, price: 1, msg: 'Quantity must be a valid integer.' },
        { quantity: 1000000, price: 1, msg: 'Quantity cannot exceed 999999' },
        { quantity: true, price: 1, msg: 'Quantity must be a valid integer.' },
        { quantity: 1, price: 'cheap', msg: 'Price must be a valid number.' },
        { quantity: 1, price: 1.234, msg: 'Price can have at most 2 decimal places.' },
        { quantity: 1, price: 0.001, msg: 'Price can have at most 2 decimal places.' },
        { quantity: 1, price: -3, msg: 'Price must be greater than 0.' },
        { quantity: 1, price: 1e12, msg: 'Price cannot exceed 10000000.00.' },
        { quantity: 1, price: [1], msg: 'Price must be a valid number.' },
      ]) {
        const { msg, ...fields } = body;
        const res = await api()
          .post('/api/products')
          .set('Authorization', actors.admin.auth)
          .send({ name: unique(), ...fields })
          .expect(400);
        expect(res.body.message, JSON.stringify(fields)).to.equal(msg);
      }
    });

    it('When the JSON body is malformed or not an object, then 400 in the product envelope', async () => {
      const bad = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .set('Content-Type', 'application/json')
        .send('{"name": ')
        .expect(400);
      expect(bad.body.success).to.equal(false);
      const arr = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .send([1, 2])
        .expect(400);
      expect(arr.body.success).to.equal(false);
    });

    it('When the name exists in another case, then 409 DUPLICATE_RESOURCE', async () => {
      const p = await createProduct(actors.admin);
      const res = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .send({ name: p.name.toUpperCase(), quantity: 1, price: 1 })
        .expect(409);
      expectProductError(res.body, 409, `A product named '${p.name.toUpperCase()}' already exists.`);
      expect(res.body.error).to.equal('DUPLICATE_RESOURCE');
    });

    it('When the sku exists (any case), then 409', async () => {
      const p = await createProduct(actors.admin);
      const res = await api()
        .post('/api/products')
        .set('Authorization', actors.admin.auth)
        .send({ name: unique(), quantity: 1, price: 1, sku: p.sku.toLowerCase() })
        .expect(409);
      expectProductError(res.body, 409, `A product with SKU '${p.sku.toLowerCase()}' already exists.`);
    });

    it('When read-only fields are sent, then they are ignored', async () => {
      const p = await createProduct(actors.admin, {
        id: 999999,
        totalValue: 1,
        createdAt: '2000-01-01T00:00:00Z',
      });
      expect(p.id).to.not.equal(999999);
      expect(p.totalValue).to.equal(50);
      expect(p.createdAt).to.not.match(/^2000/);
    });
  });

  describe('roles', () => {
    it('When anonymous, then 401 on every product route in the product envelope', async () => {
      const p = await createProduct(actors.admin);
      const calls = [
        api().get('/api/products'),
        api().get('/api/products/paged'),
        api().get(`/api/products/${p.id}`),
        api().get('/api/products/search?name=a'),
        api().get('/api/products/low-stock'),
        api().get('/api/products/total-stock-value'),
        api().post('/api/products').send({}),
        api().put(`/api/products/${p.id}`).send({}),
        api().put(`/api/products/${p.id}/quantity`).send({ quantity: 1 }),
        api().put(`/api/products/${p.id}/price`).send({ price: 1 }),
        api().put(`/api/products/${p.id}/name`).send({ name: 'x' }),
        api().put('/api/products/stock/batch').send({ updates: [] }),
        api().delete(`/api/products/${p.id}`),
        api()
          .delete('/api/products')
          .send({ ids: [p.id] }),
      ];
      for (const call of calls) {
        const res = await call.expect(401);
        expect(res.body).to.include({ success: false, status: 401, data: null });
      }
    });

    it('When a USER calls an ADMIN operation, then 403 and nothing changes', async () => {
      const p = await createProduct(actors.admin);
      const auth = actors.user.auth;
      await api()
        .post('/api/products')
        .set('Authorization', auth)
        .send({ name: unique(), quantity: 1, price: 1 })
        .expect(403);
      await api().put(`/api/products/${p.id}`).set('Authorization', auth).send({ quantity: 0 }).expect(403);
      await api().delete(`/api/products/${p.id}`).set('Authorization', auth).expect(403);
      const res = await api()
        .delete('/api/products')
        .set('Authorization', auth)
        .send({ ids: [p.id] })
        .expect(403);
      expect(res.body).to.include({ success: false, status: 403 });
      const still = await api().get(`/api/products/${p.id}`).set('Authorization', auth).expect(200);
      expect(still.body.data.quantity).to.equal(10);
    });

    it('When a USER calls USER operations, then they succeed', async () => {
      const p = await createProduct(actors.admin);
      const auth = actors.user.auth;
      await api().get('/api/products').set('Authorization', auth).expect(200);
      await api()
        .put(`/api/products/${p.id}/quantity`)
        .set('Authorization', auth)
        .send({ quantity: 2 })
        .expect(200);
      await api()
        .put(`/api/products/${p.id}/price`)
        .set('Authorization', auth)
        .send({ price: 2 })
        .expect(200);
      await api()
        .put(`/api/products/${p.id}/name`)
        .set('Authorization', auth)
        .send({ name: unique() })
        .expect(200);
      await api()
        .put('/api/products/stock/batch')
        .set('Authorization', auth)
        .send({ updates: [{ productId: String(p.id), quantity: 4 }] })
        .expect(200);
    });
  });

  describe('get one and ids', () => {
    it('When the product exists, then the envelope `Product fetched successfully`', async () => {
      const p = await createProduct(actors.admin);
      const res = await api().get(`/api/products/${p.id}`).set('Authorization', actors.user.auth).expect(200);
      expect(res.body).to.deep.equal({ success: true, message: 'Product fetched successfully', data: p });
    });

    it('When it does not exist, then 404 with the contract message', async () => {
      const res = await api()
        .get('/api/products/987654321')
        .set('Authorization', actors.user.auth)
        .expect(404);
      expectProductError(res.body, 404, 'The product with ID 987654321 does not exist.');
      expect(res.body.data).to.equal(null);
      expect(res.body.path).to.equal('/api/products/987654321');
      const max = await api()
        .get('/api/products/9223372036854775807')
        .set('Authorization', actors.user.auth)
        .expect(404);
      expect(max.body.message).to.equal('The product with ID 9223372036854775807 does not exist.');
      const padded = await api()
        .get('/api/products/000987654321')
        .set('Authorization', actors.user.auth)
        .expect(404);
      expect(padded.body.message).to.equal('The product with ID 987654321 does not exist.');
    });

    it('When the id is not numeric, negative, or beyond int64, then 400 in the product envelope', async () => {
      for (const id of ['abc', '-1', '1.5', '9223372036854775808', '99999999999999999999', '1e3', '%20']) {
        const res = await api().get(`/api/products/${id}`).set('Authorization', actors.user.auth).expect(400);
        expect(res.body).to.include({
          success: false,
          error: 'VALIDATION_ERROR',
          message: 'Product ID must be a whole number.',
        });
      }
      for (const path of ['/api/products/abc/quantity', '/api/products/x/price', '/api/products/x/name']) {
        const res = await api().put(path).set('Authorization', actors.user.auth).send({}).expect(400);
        expect(res.body.details.map((d: { field: string }) => d.field)).to.include('id');
      }
    });

    it('When a route under /api/products does not exist, then 404 in the product envelope', async () => {
      const raw = api();
      const res = await raw.get('/api/products/1/nothing').set('Authorization', actors.user.auth).expect(404);
      expect(res.body).to.include({ success: false, status: 404, data: null, error: 'not_found' });
      const patch = await raw
        .patch('/api/products/1')
        .set('Authorization', actors.user.auth)
        .send({})
        .expect(404);
      expect(patch.body.success).to.equal(false);
    });
  });

  describe('partial update (PUT /api/products/{id})', () => {
    it('When a subset is sent, then only those fields change (either price spelling) and a bare product returns', async () => {
      const p = await createProduct(actors.admin, { category: 'A', description: 'd' });
      const res = await api()
        .put(`/api/products/${p.id}`)
        .set('Authorization', actors.admin.auth)
        .send({ purchasePrice: 7.25, quantity: 4, description: null })
        .expect(200);
      expect(res.body).to.include({
        id: p.id,
        name: p.name,
        sku: p.sku,
        quantity: 4,
        price: 7.25,
        purchasePrice: 7.25,
        totalValue: 29,
        category: 'A',
        description: null,
      });
      const events = await sql<{ payload: any }>(
        "select payload from outbox_event where type = 'product.quantity.changed' and aggregate_id = ? order by id",
        [String(p.id)],
      );
      expect(events.map(e => e.payload)).to.have.length(1);
      expect(events[0].payload).to.include({
        productId: p.id,
        quantityBefore: 10,
        quantityAfter: 4,
        change: -6,
        actor: actors.admin.username,
      });
    });

    it('When nothing is sent, then the product is unchanged', async () => {
      const p = await createProduct(actors.admin);
      const res = await api()
        .put(`/api/products/${p.id}`)
        .set('Authorization', actors.admin.auth)
        .send({})
        .expect(200);
      expect(res.body).to.include({ name: p.name, quantity: p.quantity, price: p.price });
    });

    it('When values are invalid, then 400 and nothing changes', async () => {
      const p = await createProduct(actors.admin);
      const res = await api()
        .put(`/api/products/${p.id}`)
        .set('Authorization', actors.admin.auth)
        .send({ quantity: -5, name: '' })
        .expect(400);
      expect(res.body.data).to.deep.equal({
        name: 'Name is required and cannot be empty.',
        quantity: 'Quantity cannot be negative.',
      });
    });

    it('When the product is missing, then 404; when the name clashes, then 409', async () => {
      await api()
        .put('/api/products/987654321')
        .set('Authorization', actors.admin.auth)
        .send({ quantity: 1 })
        .expect(404);
      const a = await createProduct(actors.admin);
      const b = await createProduct(actors.admin);
      const res = await api()
        .put(`/api/products/${b.id}`)
        .set('Authorization', actors.admin.auth)
        .send({ name: a.name })
        .expect(409);
      expect(res.body.message).to.equal(`A product named '${a.name}' already exists.`);
      const sku = await api()
        .put(`/api/products/${b.id}`)
        .set('Authorization', actors.admin.auth)
        .send({ sku: a.sku })
        .expect(409);
      expect(sku.body.message).to.equal(`A product with SKU '${a.sku}' already exists.`);
    });
  });

  describe('quantity, price, name', () => {
    it('When the quantity is set, then the envelope with the recomputed totalValue and one outbox event', async () => {
      const p = await createProduct(actors.admin, { quantity: 10, price: 0.1 });
      const res = await api()
        .put(`/api/products/${p.id}/quantity`)
        .set('Authorization', actors.user.auth)
        .send({ quantity: 3 })
        .expect(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.message).to.equal('Quantity updated successfully');
      expect(res.body.data).to.include({ quantity: 3, totalValue: 0.3 });
      const events = await sql<{ payload: any }>(
        "select payload from outbox_event where aggregate_id = ? and type = 'product.quantity.changed'",
        [String(p.id)],
      );
      expect(events).to.have.length(1);
      expect(events[0].payload).to.include({
        name: p.name,
        quantityBefore: 10,
        quantityAfter: 3,
        change: -7,
        actor: actors.user.username,
      });
      expect(events[0].payload.occurredAt).to.match(ISO);
    });

    it('When the quantity is missing, null, not an integer or negative, then the contract messages', async () => {
      const p = await createProduct(actors.admin);
      const cases: [unknown, string][] = [
        [{}, 'Quantity field is missing or null.'],
        [{ quantity: null }, 'Quantity field is missing or null.'],
        [{ quantity: 'abc' }, 'Quantity must be a valid integer.'],
        [{ quantity: 2.5 }, 'Quantity must be a valid integer.'],
        [{ quantity: -1 }, 'Quantity cannot be negative.'],
        [{ quantity: -1.5 }, 'Quantity must be a valid integer.'],
      ];
      for (const [body, message] of cases) {
        const res = await api()
          .put(`/api/products/${p.id}/quantity`)
          .set('Authorization', actors.user.auth)
          .send(body as object)
          .expect(400);
        expect(res.body.message, JSON.stringify(body)).to.equal(message);
        expect(res.body.details).to.deep.equal([{ field: 'quantity', message }]);
      }
      const missing = await api()
        .put('/api/products/987654321/quantity')
        .set('Authorization', actors.user.auth)
        .send({ quantity: 1 })
        .expect(404);
      expect(missing.body.message).to.equal('Product not found.');
    });

    it('When the price is set with either spelling, then the envelope with the new price', async () => {
      const p = await createProduct(actors.admin, { quantity: 3 });
      const a = await api()
        .put(`/api/products/${p.id}/price`)
        .set('Authorization', actors.user.auth)
        .send({ price: 0.07 })
        .expect(200);
      expect(a.body.message).to.equal('Price updated successfully');
      expect(a.body.data).to.include({ price: 0.07, purchasePrice: 0.07, totalValue: 0.21 });
      const b = await api()
        .put(`/api/products/${p.id}/price`)
        .set('Authorization', actors.user.auth)
        .send({ purchasePrice: 12.5 })
        .expect(200);
      expect(b.body.data).to.include({ price: 12.5, totalValue: 37.5 });
    });

    it('When the price is missing, not a number or not positive, then the contract messages', async () => {
      const p = await createProduct(actors.admin);
      const cases: [unknown, string][] = [
        [{}, 'Price field is missing or null.'],
        [{ price: null }, 'Price field is missing or null.'],
        [{ purchasePrice: null }, 'Price field is missing or null.'],
        [{ price: 'x' }, 'Price must be a valid number.'],
        [{ price: 0 }, 'Price must be greater than 0.'],
        [{ purchasePrice: -1 }, 'Price must be greater than 0.'],
        [{ price: 1, purchasePrice: 2 }, 'price and purchasePrice must be equal when both are given.'],
      ];
      for (const [body, message] of cases) {
        const res = await api()
          .put(`/api/products/${p.id}/price`)
          .set('Authorization', actors.user.auth)
          .send(body as object)
          .expect(400);
        expect(res.body.message, JSON.stringify(body)).to.equal(message);
      }
      const missing = await api()
        .put('/api/products/987654321/price')
        .set('Authorization', actors.user.auth)
        .send({ price: 1 })
        .expect(404);
      expect(missing.body.message).to.equal('Product not found.');
    });

    it('When renamed, then the envelope; blank -> 400; clash -> 409; a case variant of its own name is allowed', async () => {
      const p = await createProduct(actors.admin);
      const other = await createProduct(actors.admin);
      const newName = unique('Renamed');
      const ok = await api()
        .put(`/api/products/${p.id}/name`)
        .set('Authorization', actors.user.auth)
        .send({ name: `  ${newName} ` })
        .expect(200);
      expect(ok.body).to.include({ success: true, message: 'Name updated successfully' });
      expect(ok.body.data.name).to.equal(newName);
      const upper = await api()
        .put(`/api/products/${p.id}/name`)
        .set('Authorization', actors.user.auth)
        .send({ name: newName.toUpperCase() })
        .expect(200);
      expect(upper.body.data.name).to.equal(newName.toUpperCase());
      for (const body of [{}, { name: '' }, { name: '   ' }, { name: null }]) {
        const res = await api()
          .put(`/api/products/${p.id}/name`)
          .set('Authorization', actors.user.auth)
          .send(body)
          .expect(400);
        expect(res.body.message).to.equal('Name is required and cannot be empty.');
      }
      const clash = await api()
        .put(`/api/products/${p.id}/name`)
        .set('Authorization', actors.user.auth)
        .send({ name: other.name.toLowerCase() })
        .expect(409);
      expectProductError(clash.body, 409, `A product named '${other.name.toLowerCase()}' already exists.`);
      await api()
        .put('/api/products/987654321/name')
        .set('Authorization', actors.user.auth)
        .send({ name: unique() })
        .expect(404);
    });
  });

  describe('delete', () => {
    it('When an ADMIN deletes, then the envelope with data null; again, then 404 with the contract text', async () => {
      const p = await createProduct(actors.admin);
      const res = await api()
        .delete(`/api/products/${p.id}`)
        .set('Authorization', actors.admin.auth)
        .expect(200);
      expect(res.body).to.deep.equal({
        success: true,
        message: `Product with ID ${p.id} has been successfully deleted.`,
        data: null,
      });
      const again = await api()
        .delete(`/api/products/${p.id}`)
        .set('Authorization', actors.admin.auth)
        .expect(404);
      expectProductError(again.body, 404, `Cannot delete. Product with ID ${p.id} does not exist.`);
    });
  });

  describe('German', () => {
    it('When ?lang=de, then German messages on success and error', async () => {
      const p = await createProduct(actors.admin);
      const ok = await api()
        .get(`/api/products/${p.id}?lang=de`)
        .set('Authorization', actors.user.auth)
        .expect(200);
      expect(ok.body.message).to.equal('Produkt erfolgreich abgerufen');
      const missing = await api()
        .get('/api/products/987654321?lang=de')
        .set('Authorization', actors.user.auth)
        .expect(404);
      expect(missing.body.message).to.equal('Das Produkt mit der ID 987654321 existiert nicht.');
      const bad = await api()
        .put(`/api/products/${p.id}/quantity?lang=de`)
        .set('Authorization', actors.user.auth)
        .send({ quantity: -1 })
        .expect(400);
      expect(bad.body.message).to.equal('Die Menge darf nicht negativ sein.');
    });
  });
  describe('writes through the unit of work', () => {
    const read = async (id: number) =>
      JSON.stringify(
        (await api().get(`/api/products/${id}`).set('Authorization', actors.user.auth).expect(200)).body.data,
      );

    it('When a product is created, updated, re-priced and renamed, then each answer is the product as a read returns it', async () => {
      const created = await createProduct(actors.admin, { quantity: 3, price: 0.1, category: '' });
      expect(created).to.include({ totalValue: 0.3, category: null, description: null });
      expect(created.updatedAt).to.equal(created.createdAt);
      expect(JSON.stringify(created)).to.equal(await read(created.id));
      const answers = [
        await api()
          .put(`/api/products/${created.id}`)
          .set('Authorization', actors.admin.auth)
          .send({ quantity: 999999, price: 9999999.99, description: 'd' }),
        await api()
          .put(`/api/products/${created.id}/price`)
          .set('Authorization', actors.admin.auth)
          .send({ price: 0.07 }),
        await api()
          .put(`/api/products/${created.id}/name`)
          .set('Authorization', actors.admin.auth)
          .send({ name: created.name }),
      ];
      expect(answers.map(res => res.status)).to.deep.equal([200, 200, 200]);
      expect(answers[0].body).to.include({ totalValue: 9999989990000.01, description: 'd' });
      expect(answers[1].body.data).to.include({ totalValue: 69999.93 });
      expect(answers[2].body.data.updatedAt, 'a rename to the same name is a write').to.not.equal(
        answers[1].body.data.updatedAt,
      );
      expect(JSON.stringify(answers[2].body.data)).to.equal(await read(created.id));
    });

    it('When two creations of one name race, or two deletions of one product, then 201 and 409, 200 and 404, never 500', async () => {
      const name = unique('Race');
      const creations = await Promise.all(
        [1, 2, 3].map(() =>
          api()
            .post('/api/products')
            .set('Authorization', actors.admin.auth)
            .send({ name, quantity: 1, price: 1 }),
        ),
      );
      expect(creations.map(res => res.status).sort()).to.deep.equal([201, 409, 409]);
      const id = creations.find(res => res.status === 201)!.body.id as number;
      const deletions = await Promise.all(
        [1, 2].map(() => api().delete(`/api/products/${id}`).set('Authorization', actors.admin.auth)),
      );
      expect(deletions.map(res => res.status).sort()).to.deep.equal([200, 404]);
    });
  });
});
