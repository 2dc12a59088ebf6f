import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { lowStockProducts } from '../../domain/catalog/product-queries.js';
import {
  createProduct,
  productActors,
  truncateProducts,
  unique,
  type ProductActors,
} from '../support/products.js';

describe('Product API: lists, paging, search, low stock, total stock value', () => {
  let actors: ProductActors;
  const get = (url: string) => api().get(url).set('Authorization', actors.user.auth);

  before(async () => {
    actors = await productActors();
  });

  describe('on an empty table, then the demo numbers', () => {
    before(truncateProducts);

    it('When there are no products, then total 0, an empty list, an empty page and the "sufficiently stocked" message', async () => {
      const total = await get('/api/products/total-stock-value').expect(200);
      expect(total.body).to.deep.equal({
        success: true,
        message: 'Total stock value fetched successfully',
        data: 0,
      });
      expect((await get('/api/products').expect(200)).body).to.deep.equal([]);
      const page = await get('/api/products/paged').expect(200);
      expect(page.body.data).to.deep.equal({
        content: [],
        pageNumber: 0,
        currentPage: 0,
        pageSize: 10,
        totalElements: 0,
        totalPages: 0,
      });
      const low = await get('/api/products/low-stock').expect(200);
      expect(low.body).to.deep.equal({ message: 'All products are sufficiently stocked.' });
      const de = await get('/api/products/low-stock?lang=de').expect(200);
      expect(de.body).to.deep.equal({ message: 'Alle Produkte sind ausreichend vorrätig.' });
    });

    it('When 10 x 50 and 5 x 30 exist, then the total is 650', async () => {
      await createProduct(actors.admin, { name: unique('Alpha'), quantity: 10, price: 50 });
      await createProduct(actors.admin, {
        name: unique('Beta'),
        quantity: 5,
        price: undefined,
        purchasePrice: 30,
      });
      const res = await get('/api/products/total-stock-value').expect(200);
      expect(res.body.data).to.equal(650);
      const low = await get('/api/products/low-stock').expect(200);
      expect(low.body).to.deep.equal({ message: 'All products are sufficiently stocked.' });
    });

    it('When prices have cents that floats cannot add, then the total is still exact to the cent', async () => {
      await truncateProducts();
      for (let i = 0; i < 10; i += 1) await createProduct(actors.admin, { quantity: 1, price: 0.1 });
      await createProduct(actors.admin, { quantity: 3, price: 0.2 });
      const res = await get('/api/products/total-stock-value').expect(200);
      expect(res.body.data).to.equal(1.6);
    });

    it('When the demo products exist, then 2655.00 and the three low-stock products', async () => {
      await truncateProducts();
      const demo: [string, number, number][] = [
        ['Alpha Widget', 10, 50],
        ['Beta Gadget', 5, 30],
        ['Gamma Tool', 3, 20],
        ['Delta Device', 3, 10],
        ['Epsilon Accessory', 20, 40],
        ['Zeta Instrument', 7, 60],
        ['Eta Apparatus', 15, 25],
        ['Theta Machine', 4, 80],
      ];
      for (const [name, quantity, price] of demo)
        await createProduct(actors.admin, { name, quantity, price });
      const res = await get('/api/products/total-stock-value').expect(200);
      expect(res.body.data).to.equal(2655);
      const low = await get('/api/products/low-stock').expect(200);
      expect(low.body.map((p: { name: string }) => p.name)).to.deep.equal([
        'Gamma Tool',
        'Delta Device',
        'Theta Machine',
      ]);
      // The threshold is configuration (LOW_STOCK_THRESHOLD): the same query with 8 adds Beta and Zeta.
      const at8 = await lowStockProducts(testApp().services.orm.em.fork(), 8);
      expect(at8.map(p => p.name)).to.deep.equal([
        'Beta Gadget',
        'Gamma Tool',
        'Delta Device',
        'Zeta Instrument',
        'Theta Machine',
      ]);
    });
  });

  describe('list all and paging', () => {
    let ids: number[];
    before(async () => {
      await truncateProducts();
      ids = [];
      const specs: [string, number, number][] = [
        ['c-item', 5, 3],
        ['A-item', 1, 10],
        ['b-item', 9, 1],
      ];
      for (const [name, quantity, price] of specs)
        ids.push((await createProduct(actors.admin, { name, quantity, price })).id);
    });

    it('When listed, then a bare array sorted by id', async () => {
      const res = await get('/api/products').expect(200);
      expect(res.body.map((p: { id: number }) => p.id)).to.deep.equal(ids);
    });

    it('When limit, page, sortBy and order are given, then they apply', async () => {
      const byName = await get('/api/products?sortBy=name').expect(200);
      expect(byName.body.map((p: { name: string }) => p.name)).to.deep.equal(['A-item', 'b-item', 'c-item']);
      const byValueDesc = await get('/api/products?sortBy=totalValue&order=DESC').expect(200);
      expect(byValueDesc.body.map((p: { totalValue: number }) => p.totalValue)).to.deep.equal([15, 10, 9]);
      const limited = await get('/api/products?limit=2').expect(200);
      expect(limited.body.map((p: { id: number }) => p.id)).to.deep.equal(ids.slice(0, 2));
      const second = await get('/api/products?limit=2&page=1').expect(200);
      expect(second.body.map((p: { id: number }) => p.id)).to.deep.equal(ids.slice(2));
    });

    it('When list parameters are invalid, then 400 VALIDATION_ERROR', async () => {
      const cases: [string, string][] = [
        ['sortBy=password', 'sortBy must be one of: id, name, quantity, price, totalValue, createdAt.'],
        [
          'sortBy=name;drop table product',
          'sortBy must be one of: id, name, quantity, price, totalValue, createdAt.',
        ],
        ['order=sideways', 'order must be asc or desc.'],
        ['limit=0', 'limit must be a whole number between 1 and 10000.'],
        ['limit=abc', 'limit must be a whole number between 1 and 10000.'],
        ['page=-1&limit=1', 'page must be a non-negative whole number.'],
      ];
      for (const [query, message] of cases) {
        const res = await get(`/api/products?${query}`).expect(400);
        expect(res.body, query).to.include({ error: 'VALIDATION_ERROR', message });
      }
    });

    it('When paged, then the envelope with both page spellings; past the end, then empty content with the same totals', async () => {
      const first = await get('/api/products/paged?page=0&size=2').expect(200);
      expect(first.body.message).to.equal('Paged products fetched successfully');
      expect(first.body.data).to.include({
        pageNumber: 0,
        currentPage: 0,
        pageSize: 2,
        totalElements: 3,
        totalPages: 2,
      });
      expect(first.body.data.content.map((p: { id: number }) => p.id)).to.deep.equal(ids.slice(0, 2));
      const last = await get('/api/products/paged?page=1&size=2').expect(200);
      expect(last.body.data.content.map((p: { id: number }) => p.id)).to.deep.equal(ids.slice(2));
      const past = await get('/api/products/paged?page=7&size=2').expect(200);
      expect(past.body.data).to.deep.equal({
        content: [],
        pageNumber: 7,
        currentPage: 7,
        pageSize: 2,
        totalElements: 3,
        totalPages: 2,
      });
    });

    it('When page or size are out of bounds, then 400', async () => {
      for (const [query, message] of [
        ['page=-1', 'page must be a non-negative whole number.'],
        ['size=0', 'size must be a whole number between 1 and 200.'],
        ['size=201', 'size must be a whole number between 1 and 200.'],
        ['size=1000000000000', 'size must be a whole number between 1 and 200.'],
        ['page=abc', 'page must be a non-negative whole number.'],
        ['page=2147483648', 'page must be a non-negative whole number.'],
      ]) {
        const res = await get(`/api/products/paged?${query}`).expect(400);
        expect(res.body, query).to.include({ error: 'VALIDATION_ERROR', message });
      }
    });
  });

  describe('search', () => {
    let tag: string;
    before(async () => {
      tag = unique('Srch').replace(' ', '');
      await createProduct(actors.admin, {
        name: `${tag} Red Lamp`,
        description: 'bright',
        category: 'Lighting',
      });
      await createProduct(actors.admin, { name: `${tag} 100% Cotton_Shirt`, category: 'Apparel' });
      await createProduct(actors.admin, { name: `${tag} Back\\slash`, sku: `${tag}-SKU` });
    });

    it('When searching by name, then a case-insensitive substring match as a bare array', async () => {
      const res = await get(
        `/api/products/search?name=${encodeURIComponent(`${tag} red`.toUpperCase())}`,
      ).expect(200);
      expect(res.body.map((p: { name: string }) => p.name)).to.deep.equal([`${tag} Red Lamp`]);
      expect(res.body[0]).to.include.keys('purchasePrice', 'sku', 'totalValue', 'lastUpdated');
    });

    it('When the term has %, _ or \\, then they match literally', async () => {
      const pct = await get(`/api/products/search?name=${encodeURIComponent('100%')}`).expect(200);
      expect(pct.body.map((p: { name: string }) => p.name)).to.deep.equal([`${tag} 100% Cotton_Shirt`]);
      const underscore = await get(`/api/products/search?name=${encodeURIComponent(`${tag} _`)}`).expect(204);
      expect(underscore.text).to.equal('');
      const under = await get(`/api/products/search?name=${encodeURIComponent('n_S')}`).expect(200);
      expect(under.body).to.have.length(1);
      const slash = await get(`/api/products/search?name=${encodeURIComponent('k\\s')}`).expect(200);
      expect(slash.body.map((p: { name: string }) => p.name)).to.deep.equal([`${tag} Back\\slash`]);
      await get(`/api/products/search?name=${encodeURIComponent(`${tag}%Lamp`)}`).expect(204);
    });

    it('When searching with q, then description, sku and category match too', async () => {
      const byCategory = await get(`/api/products/search?q=lighting`).expect(200);
      expect(byCategory.body.some((p: { name: string }) => p.name === `${tag} Red Lamp`)).to.equal(true);
      const byDescription = await get(`/api/products/search?q=BRIGHT`).expect(200);
      expect(byDescription.body.some((p: { name: string }) => p.name === `${tag} Red Lamp`)).to.equal(true);
      const bySku = await get(`/api/products/search?q=${encodeURIComponent(`${tag}-sku`)}`).expect(200);
      expect(bySku.body.map((p: { name: string }) => p.name)).to.deep.equal([`${tag} Back\\slash`]);
    });

    it('When nothing matches, then 204 with an empty body', async () => {
      const res = await get('/api/products/search?name=zzz-no-such-product-zzz').expect(204);
      expect(res.text).to.equal('');
      await get('/api/products/search?q=zzz-no-such-product-zzz').expect(204);
    });

    it('When neither name nor q is given (or both are empty), then 400', async () => {
      for (const query of ['', '?name=', '?q=&name=', '?other=1']) {
        const res = await get(`/api/products/search${query}`).expect(400);
        expect(res.body).to.include({
          success: false,
          message: "Provide a search term with the 'name' or 'q' parameter.",
          error: 'VALIDATION_ERROR',
        });
      }
      const long = await get(`/api/products/search?name=${'x'.repeat(300)}`).expect(400);
      expect(long.body.message).to.equal('The search term cannot exceed 255 characters.');
    });
  });
});
