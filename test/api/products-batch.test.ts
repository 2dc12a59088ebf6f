import { expect } from 'chai';
import { api } from '../setup/hooks.js';
import { createProduct, productActors, sql, unique, type ProductActors } from '../support/products.js';

/** Inserts `count` products straight into the table (fast setup) and returns their ids in order. */
async function insertProducts(count: number, quantity = 5): Promise<number[]> {
  const tag = unique('Bulk').replace(' ', '-');
  const rows = await sql<{ id: string }>(
    `insert into product (name, quantity, price, sku)
     select ? || '-' || g, ?, 1.25, ? || '-' || g from generate_series(1, ?) g
     returning id::text as id`,
    [tag, quantity, tag, count],
  );
  return rows.map(r => Number(r.id)).sort((a, b) => a - b);
}

const quantities = async (ids: number[]) => {
  const rows = await sql<{ id: string; quantity: number }>(
    'select id::text as id, quantity from product p where p.id = any(?::bigint[]) order by p.id',
    [`{${ids.join(',')}}`],
  );
  return rows.map(r => r.quantity);
};

describe('Product API: batch stock update and bulk delete', () => {
  let actors: ProductActors;
  const batch = (body: unknown) =>
    api()
      .put('/api/products/stock/batch')
      .set('Authorization', actors.user.auth)
      .send(body as object);

  before(async () => {
    actors = await productActors();
  });

  describe('batch stock update', () => {
    it('When 1,000 valid rows are sent, then all 1,000 are updated in one transaction and returned in request order', async () => {
      const ids = await insertProducts(1000);
      const updates = ids.map((id, i) => ({ productId: i % 2 ? String(id) : id, quantity: i }));
      const res = await batch({ updates }).expect(200);
      expect(res.body).to.have.length(1000);
      expect(res.body.map((p: { id: number }) => p.id)).to.deep.equal(ids);
      expect(res.body[7]).to.include({ quantity: 7, price: 1.25, purchasePrice: 1.25, totalValue: 8.75 });
      expect(await quantities(ids)).to.deep.equal(ids.map((_, i) => i));
      const [events] = await sql<{ n: string; txids: string }>(
        `select count(*)::text as n from outbox_event
         where type = 'product.quantity.changed' and aggregate_id = any(?::text[])`,
        [`{${ids.join(',')}}`],
      );
      // Row 5 was set to its own quantity (5): not a change, no event.
      expect(Number(events.n)).to.equal(999);
    });

    it('When 7 of 1,000 rows are invalid, then 400 lists all 7 with row index and field, and nothing changes', async () => {
      const ids = await insertProducts(1000);
      const updates: unknown[] = ids.map(id => ({ productId: id, quantity: 42 }));
      const bad: Record<number, unknown> = {
        3: { productId: ids[3], quantity: -1 },
        100: { productId: ids[100], quantity: 'many' },
        250: { productId: ids[250], quantity: null },
        400: { productId: ids[400] },
        555: { productId: 'abc', quantity: 1 },
        777: { productId: ids[777], quantity: 1.5 },
        999: null,
      };
      for (const [index, row] of Object.entries(bad)) updates[Number(index)] = row;
      const res = await batch({ updates }).expect(400);
      expect(res.body).to.include({ success: false, error: 'VALIDATION_ERROR', status: 400 });
      expect(res.body.message).to.equal('7 invalid entries in the batch. Nothing was updated.');
      expect(res.body.details).to.deep.equal([
        { field: 'updates[3].quantity', message: 'Quantity cannot be negative.', index: 3 },
        { field: 'updates[100].quantity', message: 'Quantity must be a valid integer.', index: 100 },
        { field: 'updates[250].quantity', message: 'Quantity field is missing or null.', index: 250 },
        { field: 'updates[400].quantity', message: 'Quantity field is missing or null.', index: 400 },
        { field: 'updates[555].productId', message: 'productId must be a whole number.', index: 555 },
        { field: 'updates[777].quantity', message: 'Quantity must be a valid integer.', index: 777 },
        {
          field: 'updates[999]',
          message: 'Each update must be an object with productId and quantity.',
          index: 999,
        },
      ]);
      expect(await quantities(ids)).to.deep.equal(ids.map(() => 5));
    });

    it('When some product ids do not exist, then 404 lists them and nothing changes', async () => {
      const ids = await insertProducts(3);
      const res = await batch({
        updates: [
          { productId: ids[0], quantity: 1 },
          { productId: 987654321, quantity: 1 },
          { productId: ids[1], quantity: 1 },
          { productId: '987654322', quantity: 1 },
        ],
      }).expect(404);
      expect(res.body.message).to.equal(
        'These product IDs do not exist: 987654321, 987654322. Nothing was updated.',
      );
      expect(res.body.details).to.deep.equal([
        { field: 'updates[1].productId', message: 'The product with ID 987654321 does not exist.', index: 1 },
        { field: 'updates[3].productId', message: 'The product with ID 987654322 does not exist.', index: 3 },
      ]);
      expect(await quantities(ids)).to.deep.equal([5, 5, 5]);
    });

    it('When the list is missing, empty, too long, not a list or has a product twice, then 400', async () => {
      const [id] = await insertProducts(1);
      const cases: [unknown, string][] = [
        [{}, "The 'updates' list is required and cannot be empty."],
        [{ updates: [] }, "The 'updates' list is required and cannot be empty."],
        [
          { updates: Array.from({ length: 1001 }, () => ({ productId: id, quantity: 1 })) },
          'A batch can contain at most 1000 updates.',
        ],
        [
          {
            updates: [
              { productId: id, quantity: 1 },
              { productId: String(id), quantity: 2 },
            ],
          },
          '1 invalid entries in the batch. Nothing was updated.',
        ],
      ];
      for (const [body, message] of cases) {
        const res = await batch(body).expect(400);
        expect(res.body.message).to.equal(message);
      }
      const notList = await batch({ updates: 'all' }).expect(400);
      expect(notList.body.error).to.equal('VALIDATION_ERROR');
      expect(await quantities([id])).to.deep.equal([5]);
    });
  });

  describe('bulk delete', () => {
    const del = (body: unknown) =>
      api()
        .delete('/api/products')
        .set('Authorization', actors.admin.auth)
        .send(body as object);

    it('When every id exists, then 204 and they are gone (ids as numbers or strings)', async () => {
      const ids = await insertProducts(3);
      const res = await del({ ids: [ids[0], String(ids[1]), ids[2], ids[2]] }).expect(204);
      expect(res.text).to.equal('');
      expect(await quantities(ids)).to.deep.equal([]);
    });

    it('When an id is unknown, then 404 lists the unknown ids and nothing is deleted', async () => {
      const ids = await insertProducts(2);
      const res = await del({ ids: [ids[0], 987654321, ids[1]] }).expect(404);
      expect(res.body.message).to.equal(
        'Cannot delete. These product IDs do not exist: 987654321. Nothing was deleted.',
      );
      expect(res.body.details).to.deep.equal([
        { field: 'ids[1]', message: 'The product with ID 987654321 does not exist.', index: 1 },
      ]);
      expect(await quantities(ids)).to.deep.equal([5, 5]);
    });

    it('When the ids are missing, empty, malformed or too many, then 400 and nothing is deleted', async () => {
      const p = await createProduct(actors.admin);
      const cases: [unknown, string][] = [
        [{}, "The 'ids' list is required and cannot be empty."],
        [{ ids: [] }, "The 'ids' list is required and cannot be empty."],
        [{ ids: [p.id, 'x', -1, null] }, 'Each id must be a whole number.'],
        [{ ids: Array.from({ length: 1001 }, () => p.id) }, 'At most 1000 ids can be deleted at once.'],
      ];
      for (const [body, message] of cases) {
        const res = await del(body).expect(400);
        expect(res.body.message).to.equal(message);
      }
      const bad = await del({ ids: [p.id, 'x', -1, null] }).expect(400);
      expect(bad.body.details.map((d: { field: string }) => d.field)).to.deep.equal([
        'ids[1]',
        'ids[2]',
        'ids[3]',
      ]);
      await api().get(`/api/products/${p.id}`).set('Authorization', actors.admin.auth).expect(200);
    });
  });
});
