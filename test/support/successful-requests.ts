import type { Test } from 'supertest';
import type { ApiClient } from './test-app.js';
import type { OperationFixtures } from './operation-fixtures.js';

/** A request ready to be sent to any app on the same database (its fixtures made already). */
export type Prepared = (client: ApiClient) => Test;

/**
 * For every operation of the OpenAPI document and every success status it lists (`method template status`):
 * how to get that status, as ADMIN (USER where the route is USER's). Each call makes its own fixtures, so a
 * request may change or delete what it names; a stream is read by a user of its own (STREAMS_PER_USER). The first entry of an operation is its cheapest success.
 */
export const SUCCESSFUL_REQUESTS: Record<string, (fx: OperationFixtures) => Promise<Prepared>> = {
  'get /api/health 200': async () => c => c.get('/api/health'),
  'get /api/health/db 200': async () => c => c.get('/api/health/db'),
  'get /health 200': async () => c => c.get('/health'),
  'post /api/auth/login 200': async fx => c =>
    c.post('/api/auth/login').send({ username: fx.user.username, password: fx.user.password }),
  'get /api/me 200': async fx => c => c.get('/api/me').set('Authorization', fx.user.auth),
  'get /api/me/authorities 200': async fx => c =>
    c.get('/api/me/authorities').set('Authorization', fx.user.auth),
  'post /api/auth/logout 204': async fx => {
    const user = await fx.freshUser();
    return c => c.post('/api/auth/logout').set('Authorization', user.auth);
  },
  'get /api/inventory/export.csv 200': async fx => {
    const reader = await fx.freshUser();
    return c => c.get('/api/inventory/export.csv').set('Authorization', reader.auth);
  },
  'get /api/stock-history/export.csv 200': async fx => {
    const reader = await fx.freshUser();
    return c => c.get('/api/stock-history/export.csv').set('Authorization', reader.auth);
  },
  'get /api/products/export.csv 200': async fx => {
    const reader = await fx.freshUser();
    return c => c.get('/api/products/export.csv').set('Authorization', reader.auth);
  },

  'post /api/inventory/import 202': async fx => c =>
    c
      .post('/api/inventory/import?dryRun=true')
      .set('Authorization', fx.admin.auth)
      .set('Content-Type', 'text/csv')
      .send('name,quantity,price\nx,1,1\n'),
  'get /api/inventory/import/{jobId} 200': async fx => {
    const job = await fx.importJob('inventory');
    return c => c.get(`/api/inventory/import/${job}`).set('Authorization', fx.admin.auth);
  },
  'delete /api/inventory/import/{jobId} 202': async fx => {
    const job = await fx.importJob('inventory');
    return c => c.delete(`/api/inventory/import/${job}`).set('Authorization', fx.admin.auth);
  },
  'post /api/products/import 202': async fx => c =>
    c
      .post('/api/products/import?dryRun=true')
      .set('Authorization', fx.admin.auth)
      .set('Content-Type', 'text/csv')
      .send('name,quantity,price\nx,1,1\n'),
  'get /api/products/import/{jobId} 200': async fx => {
    const job = await fx.importJob('products');
    return c => c.get(`/api/products/import/${job}`).set('Authorization', fx.admin.auth);
  },
  'delete /api/products/import/{jobId} 202': async fx => {
    const job = await fx.importJob('products');
    return c => c.delete(`/api/products/import/${job}`).set('Authorization', fx.admin.auth);
  },

  'get /api/products/paged 200': async fx => c =>
    c.get('/api/products/paged').set('Authorization', fx.user.auth),
  'get /api/products/search 200': async fx => {
    const product = await fx.product();
    return c =>
      c
        .get(`/api/products/search?name=${encodeURIComponent(product.name)}`)
        .set('Authorization', fx.user.auth);
  },
  'get /api/products/search 204': async fx => c =>
    c.get(`/api/products/search?name=nothing-${Date.now()}`).set('Authorization', fx.user.auth),
  'get /api/products/low-stock 200': async fx => c =>
    c.get('/api/products/low-stock').set('Authorization', fx.user.auth),
  'get /api/products/total-stock-value 200': async fx => c =>
    c.get('/api/products/total-stock-value').set('Authorization', fx.user.auth),
  'put /api/products/stock/batch 200': async fx => {
    const product = await fx.product();
    return c =>
      c
        .put('/api/products/stock/batch')
        .set('Authorization', fx.user.auth)
        .send({ updates: [{ productId: product.id, quantity: 3 }] });
  },
  'get /api/products 200': async fx => c => c.get('/api/products').set('Authorization', fx.user.auth),
  'post /api/products 201': async fx => c =>
    c
      .post('/api/products')
      .set('Authorization', fx.admin.auth)
      .send({ name: `Product ${Math.random()}`, quantity: 1, price: 2 }),
  'delete /api/products 204': async fx => {
    const product = await fx.product();
    return c =>
      c
        .delete('/api/products')
        .set('Authorization', fx.admin.auth)
        .send({ ids: [product.id] });
  },
  'get /api/products/{id} 200': async fx => {
    const product = await fx.product();
    return c => c.get(`/api/products/${product.id}`).set('Authorization', fx.user.auth);
  },
  'put /api/products/{id} 200': async fx => {
    const product = await fx.product();
    return c =>
      c
        .put(`/api/products/${product.id}`)
        .set('Authorization', fx.admin.auth)
        .send({ name: `${product.name} renamed`, quantity: 4, price: 6 });
  },
  'delete /api/products/{id} 200': async fx => {
    const product = await fx.product();
    return c => c.delete(`/api/products/${product.id}`).set('Authorization', fx.admin.auth);
  },
  'put /api/products/{id}/quantity 200': async fx => {
    const product = await fx.product();
    return c =>
      c.put(`/api/products/${product.id}/quantity`).set('Authorization', fx.user.auth).send({ quantity: 3 });
  },
  'put /api/products/{id}/price 200': async fx => {
    const product = await fx.product();
    return c =>
      c.put(`/api/products/${product.id}/price`).set('Authorization', fx.user.auth).send({ price: 7 });
  },
  'put /api/products/{id}/name 200': async fx => {
    const product = await fx.product();
    return c =>
      c
        .put(`/api/products/${product.id}/name`)
        .set('Authorization', fx.user.auth)
        .send({ name: `${product.name} named` });
  },

  'get /api/inventory 200': async fx => c =>
    c.get('/api/inventory?size=1').set('Authorization', fx.user.auth),
  'post /api/inventory 201': async fx => {
    const supplier = await fx.supplier();
    return c =>
      c
        .post('/api/inventory')
        .set('Authorization', fx.admin.auth)
        .send({ name: `Item ${Math.random()}`, quantity: 1, price: 2, supplierId: supplier.id });
  },
  'get /api/inventory/count 200': async fx => c =>
    c.get('/api/inventory/count').set('Authorization', fx.user.auth),
  'get /api/inventory/search 200': async fx => c =>
    c.get('/api/inventory/search?name=Item&size=1').set('Authorization', fx.user.auth),
  'get /api/inventory/changes 200': async fx => c =>
    c.get('/api/inventory/changes?limit=1').set('Authorization', fx.user.auth),
  'get /api/inventory/value 200': async fx => c =>
    c.get(`/api/inventory/value?asOf=${new Date().toISOString()}`).set('Authorization', fx.user.auth),
  'get /api/inventory/{id} 200': async fx => {
    const item = await fx.item();
    return c => c.get(`/api/inventory/${item.id}`).set('Authorization', fx.user.auth);
  },
  'put /api/inventory/{id} 200': async fx => {
    const supplier = await fx.supplier();
    const item = await fx.item({}, supplier.id);
    return c =>
      c
        .put(`/api/inventory/${item.id}`)
        .set('Authorization', fx.admin.auth)
        .send({ name: `${item.name} b`, quantity: 11, price: 2.5, supplierId: supplier.id });
  },
  'delete /api/inventory/{id} 204': async fx => {
    const item = await fx.item({ quantity: 0 });
    return c => c.delete(`/api/inventory/${item.id}?reason=LOST`).set('Authorization', fx.admin.auth);
  },
  'patch /api/inventory/{id}/quantity 200': async fx => {
    const item = await fx.item();
    return c =>
      c.patch(`/api/inventory/${item.id}/quantity?delta=1&reason=RESTOCK`).set('Authorization', fx.user.auth);
  },
  'patch /api/inventory/{id}/price 200': async fx => {
    const item = await fx.item();
    return c => c.patch(`/api/inventory/${item.id}/price?price=4.5`).set('Authorization', fx.user.auth);
  },
  'patch /api/inventory/{id}/name 200': async fx => {
    const item = await fx.item();
    return c =>
      c
        .patch(`/api/inventory/${item.id}/name?name=${encodeURIComponent(`${item.name} n`)}`)
        .set('Authorization', fx.admin.auth);
  },
  'get /api/items 200': async fx => c => c.get('/api/items?size=1').set('Authorization', fx.user.auth),

  'get /api/suppliers 200': async fx => c => c.get('/api/suppliers').set('Authorization', fx.user.auth),
  'post /api/suppliers 201': async fx => c =>
    c
      .post('/api/suppliers')
      .set('Authorization', fx.admin.auth)
      .send({ name: `Supplier ${Math.random()}` }),
  'get /api/suppliers/count 200': async fx => c =>
    c.get('/api/suppliers/count').set('Authorization', fx.user.auth),
  'get /api/suppliers/search 200': async fx => c =>
    c.get('/api/suppliers/search?name=Supplier').set('Authorization', fx.user.auth),
  'get /api/suppliers/{id} 200': async fx => {
    const supplier = await fx.supplier();
    return c => c.get(`/api/suppliers/${supplier.id}`).set('Authorization', fx.user.auth);
  },
  'put /api/suppliers/{id} 200': async fx => {
    const supplier = await fx.supplier();
    return c =>
      c
        .put(`/api/suppliers/${supplier.id}`)
        .set('Authorization', fx.admin.auth)
        .send({ name: `${supplier.name} b` });
  },
  'delete /api/suppliers/{id} 204': async fx => {
    const supplier = await fx.supplier();
    return c => c.delete(`/api/suppliers/${supplier.id}`).set('Authorization', fx.admin.auth);
  },

  'get /api/stock-history 200': async fx => {
    const reader = await fx.freshUser();
    return c => c.get('/api/stock-history').set('Authorization', reader.auth);
  },
  'get /api/stock-history/search 200': async fx => c =>
    c.get('/api/stock-history/search?size=1').set('Authorization', fx.user.auth),
  'get /api/stock-history/item/{itemId} 200': async fx => {
    const [item, reader] = await Promise.all([fx.item(), fx.freshUser()]);
    return c => c.get(`/api/stock-history/item/${item.id}`).set('Authorization', reader.auth);
  },
  'get /api/stock-history/reason/{reason} 200': async fx => {
    const reader = await fx.freshUser();
    return c => c.get('/api/stock-history/reason/SALE').set('Authorization', reader.auth);
  },
  'get /api/stock-history/{id} 200': async fx => {
    const entry = await fx.saleEntry();
    return c => c.get(`/api/stock-history/${entry.id}`).set('Authorization', fx.user.auth);
  },
  'post /api/stock-history/{id}/reverse 201': async fx => {
    const entry = await fx.saleEntry();
    return c =>
      c
        .post(`/api/stock-history/${entry.id}/reverse`)
        .set('Authorization', fx.admin.auth)
        .send({ note: 'undo' });
  },

  'get /api/purchase-orders 200': async fx => c =>
    c.get('/api/purchase-orders').set('Authorization', fx.user.auth),
  'post /api/purchase-orders 201': async fx => {
    const supplier = await fx.supplier();
    const item = await fx.item({}, supplier.id);
    return c =>
      c
        .post('/api/purchase-orders')
        .set('Authorization', fx.admin.auth)
        .send({ supplierId: supplier.id, lines: [{ itemId: item.id, quantity: 3 }] });
  },
  'get /api/purchase-orders/{id} 200': async fx => {
    const order = await fx.order();
    return c => c.get(`/api/purchase-orders/${order.id}`).set('Authorization', fx.user.auth);
  },
  'put /api/purchase-orders/{id} 200': async fx => {
    const order = await fx.order();
    return c =>
      c
        .put(`/api/purchase-orders/${order.id}`)
        .set('Authorization', fx.admin.auth)
        .send({ supplierId: order.supplierId, lines: [{ itemId: order.itemId, quantity: 7 }] });
  },
  'post /api/purchase-orders/{id}/order 200': async fx => {
    const order = await fx.order();
    return c => c.post(`/api/purchase-orders/${order.id}/order`).set('Authorization', fx.admin.auth);
  },
  'post /api/purchase-orders/{id}/receipts 201': async fx => {
    const order = await fx.order(true);
    return c =>
      c
        .post(`/api/purchase-orders/${order.id}/receipts`)
        .set('Authorization', fx.user.auth)
        .send({ lines: [{ itemId: order.itemId, quantity: 1 }] });
  },
  'get /api/purchase-orders/{id}/receipts 200': async fx => {
    const order = await fx.order();
    return c => c.get(`/api/purchase-orders/${order.id}/receipts`).set('Authorization', fx.user.auth);
  },
  'post /api/purchase-orders/{id}/cancel 200': async fx => {
    const order = await fx.order();
    return c => c.post(`/api/purchase-orders/${order.id}/cancel`).set('Authorization', fx.admin.auth);
  },
  'get /api/purchase-orders/{id}/export.csv 200': async fx => {
    const order = await fx.order();
    return c => c.get(`/api/purchase-orders/${order.id}/export.csv`).set('Authorization', fx.user.auth);
  },
  'get /api/purchase-orders/{id}/receipts/{receiptId} 200': async fx => {
    const receipt = await fx.receipt();
    return c =>
      c
        .get(`/api/purchase-orders/${receipt.orderId}/receipts/${receipt.id}`)
        .set('Authorization', fx.user.auth);
  },
  'post /logout 302': async () => c => c.post('/logout'),

  'get /api/analytics/stock-value 200': async fx => c =>
    c.get('/api/analytics/stock-value?start=2026-01-01&end=2026-01-02').set('Authorization', fx.user.auth),
  'get /api/analytics/stock-per-supplier 200': async fx => c =>
    c.get('/api/analytics/stock-per-supplier').set('Authorization', fx.user.auth),
  'get /api/analytics/low-stock/count 200': async fx => c =>
    c.get('/api/analytics/low-stock/count').set('Authorization', fx.user.auth),
  'get /api/analytics/item-update-frequency 200': async fx => {
    const supplier = await fx.supplier();
    return c =>
      c
        .get(`/api/analytics/item-update-frequency?supplierId=${supplier.id}`)
        .set('Authorization', fx.user.auth);
  },
  'get /api/analytics/low-stock-items 200': async fx => {
    const supplier = await fx.supplier();
    return c =>
      c.get(`/api/analytics/low-stock-items?supplierId=${supplier.id}`).set('Authorization', fx.user.auth);
  },
  'get /api/analytics/monthly-stock-movement 200': async fx => c =>
    c
      .get('/api/analytics/monthly-stock-movement?start=2026-01-01&end=2026-02-01')
      .set('Authorization', fx.user.auth),
  'get /api/analytics/stock-updates 200': async fx => c =>
    c.get('/api/analytics/stock-updates').set('Authorization', fx.user.auth),
  'post /api/analytics/stock-updates/query 200': async fx => c =>
    c.post('/api/analytics/stock-updates/query').set('Authorization', fx.user.auth).send({ minChange: 1 }),
  'get /api/analytics/summary 200': async fx => c =>
    c.get('/api/analytics/summary').set('Authorization', fx.user.auth),
  'get /api/analytics/price-trend 200': async fx => {
    const item = await fx.item();
    return c =>
      c
        .get(`/api/analytics/price-trend?itemId=${item.id}&start=2026-01-01&end=2026-01-02`)
        .set('Authorization', fx.user.auth);
  },
  'get /api/analytics/financial/summary 200': async fx => c =>
    c
      .get('/api/analytics/financial/summary?from=2026-01-01&to=2026-01-02')
      .set('Authorization', fx.user.auth),
  'get /api/analytics/reason-breakdown 200': async fx => c =>
    c.get('/api/analytics/reason-breakdown').set('Authorization', fx.user.auth),
  'get /api/analytics/by-employee 200': async fx => c =>
    c.get('/api/analytics/by-employee').set('Authorization', fx.admin.auth),
  'get /api/analytics/employee-changes 200': async fx => c =>
    c.get('/api/analytics/employee-changes?size=1').set('Authorization', fx.admin.auth),
  'get /api/alerts/low-stock 200': async fx => c =>
    c.get('/api/alerts/low-stock').set('Authorization', fx.user.auth),

  'post /api/admin/reports/rebuild 202': async fx => c =>
    c.post('/api/admin/reports/rebuild').set('Authorization', fx.admin.auth),
  'get /api/admin/reports/rebuild/{jobId} 200': async fx => {
    const job = await fx.job('/api/admin/reports/rebuild');
    return c => c.get(`/api/admin/reports/rebuild/${job}`).set('Authorization', fx.admin.auth);
  },
  'post /api/admin/integrity/check 202': async fx => c =>
    c.post('/api/admin/integrity/check').set('Authorization', fx.admin.auth),
  'get /api/admin/integrity/check/{jobId} 200': async fx => {
    const job = await fx.job('/api/admin/integrity/check');
    return c => c.get(`/api/admin/integrity/check/${job}`).set('Authorization', fx.admin.auth);
  },
  'get /api/replenishment/suggestions 200': async fx => c =>
    c.get('/api/replenishment/suggestions?size=1').set('Authorization', fx.user.auth),
  'post /api/admin/replenishment/run 202': async fx => c =>
    c.post('/api/admin/replenishment/run').set('Authorization', fx.admin.auth),
  'get /api/admin/replenishment/run/{jobId} 200': async fx => {
    const job = await fx.job('/api/admin/replenishment/run');
    return c => c.get(`/api/admin/replenishment/run/${job}`).set('Authorization', fx.admin.auth);
  },
  'post /api/replenishment/draft-orders 200': async fx => {
    const supplier = await fx.supplier();
    return c =>
      c
        .post('/api/replenishment/draft-orders')
        .set('Authorization', fx.admin.auth)
        .send({ supplierId: supplier.id });
  },
  'post /api/replenishment/draft-orders 201': async fx => {
    const supplierId = await fx.supplierToReorder();
    return c =>
      c.post('/api/replenishment/draft-orders').set('Authorization', fx.admin.auth).send({ supplierId });
  },
};
