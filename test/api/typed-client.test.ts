import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import createClient from 'openapi-fetch';
import { testApp } from '../setup/hooks.js';
import { createUser } from '../support/users.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { apiClient } from '../support/test-app.js';
import { CLIENT_TYPES_PATH, clientTypes } from '../../client/generate-client.js';
import type { paths } from '../../client/stockroom-api.js';

/*
 * The OpenAPI document is usable by a client generator: openapi-typescript turns it into the committed
 * client/stockroom-api.ts (`npm run client:generate`; CLIENT_GENERATE=1 makes this test write it), and the
 * README's tour runs through openapi-fetch typed by it, against the running server.
 */
describe('Typed client generated from the OpenAPI document', function () {
  this.timeout(120_000);

  it('When the client types are generated from the document, then they equal the committed client/stockroom-api.ts', async () => {
    const generated = await clientTypes(testApp().openapi);
    if (process.env.CLIENT_GENERATE === '1') await writeFile(CLIENT_TYPES_PATH, generated);
    expect(await readFile(CLIENT_TYPES_PATH, 'utf8'), 'run `npm run client:generate`').to.equal(generated);
  });

  it("When the README's five-request tour runs through the generated client, then every answer is the documented one", async () => {
    const admin = await createUser(testApp().services, 'ROLE_ADMIN', 'typed-client');
    const supplier = await newSupplier(apiClient(testApp()), admin.auth);
    const item = await newItem(apiClient(testApp()), admin.auth, supplier.id, { quantity: 10 });
    const baseUrl = `http://127.0.0.1:${testApp().server.port}`;
    const anonymous = createClient<paths>({ baseUrl });
    const login = await anonymous.POST('/api/auth/login', {
      body: { username: admin.username, password: admin.password },
    });
    expect(login.response.status).to.equal(200);
    const token = login.data!.data;
    const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

    // 1. what is in stock
    const search = await client.GET('/api/inventory/search', {
      params: { query: { name: item.name, size: 5 } },
    });
    expect(search.response.status).to.equal(200);
    const first = search.data!.content[0];
    expect(first.id).to.be.a('string');
    // 2. sell three of the first one
    const sold = await client.PATCH('/api/inventory/{id}/quantity', {
      params: { path: { id: first.id }, query: { delta: -1, reason: 'SALE' } },
    });
    expect(sold.response.status, JSON.stringify(sold.error)).to.equal(200);
    expect(sold.data!.quantity).to.equal(first.quantity - 1);
    // ... and a refusal arrives typed as the documented error body
    const refused = await client.PATCH('/api/inventory/{id}/quantity', {
      params: { path: { id: first.id }, query: { delta: -1_000_000, reason: 'SALE' } },
    });
    expect(refused.response.status).to.be.oneOf([400, 422]);
    expect(refused.error!.correlationId).to.match(/^SR-/);
    // 3. its history, newest first
    const history = await client.GET('/api/stock-history/item/{itemId}', {
      params: { path: { itemId: first.id }, query: { size: 5 } },
    });
    expect(history.response.status).to.equal(200);
    // 4. what the stock is worth
    const summary = await client.GET('/api/analytics/summary');
    expect(summary.response.status).to.equal(200);
    expect(summary.data!.stockPerSupplier).to.be.an('array');
    // 5. everything as a spreadsheet
    const csv = await client.GET('/api/inventory/export.csv', { parseAs: 'text' });
    expect(csv.response.status).to.equal(200);
    expect(csv.data).to.contain(first.name);
  });
});
