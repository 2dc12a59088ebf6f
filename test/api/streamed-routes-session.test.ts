import { expect } from 'chai';
import type { BrowserClient } from '../support/browser-client.js';
import { newItem, newSupplier } from '../support/inventory.js';
import { signIn, startOidcSetup, type OidcSetup } from '../support/oidc.js';
import { unique } from '../support/products.js';
import { apiClient } from '../support/test-app.js';
import { completeHistory } from '../support/stock-events.js';
import { createUser, type TestUser } from '../support/users.js';

/** Every route answered by the streaming presenter, and a name each answer must contain. */
const STREAMED_ROUTES: { path: string; kind: 'json' | 'csv'; needle: 'supplier' | 'item' | 'product' }[] = [
  { path: '/api/suppliers', kind: 'json', needle: 'supplier' },
  { path: '/api/inventory', kind: 'json', needle: 'item' },
  { path: '/api/products', kind: 'json', needle: 'product' },
  { path: '/api/stock-history', kind: 'json', needle: 'item' },
  { path: '/api/inventory/export.csv', kind: 'csv', needle: 'item' },
  { path: '/api/stock-history/export.csv', kind: 'csv', needle: 'item' },
  { path: '/api/products/export.csv', kind: 'csv', needle: 'product' },
];

/**
 * Issue 39, point 1: express-session wraps `res.end`, and a streamed answer that ended with a callback lost its
 * last chunk for every signed-in browser. Each streamed route is read whole with a session cookie and with a
 * bearer token; `fetch` rejects a body whose chunked encoding never ends.
 */
describe('Streamed lists and exports are complete for a browser session and a bearer token', function () {
  this.timeout(60000);
  let setup: OidcSetup;
  let browser: BrowserClient;
  let user: TestUser;
  const names = { supplier: '', item: '', product: '' };

  before(async () => {
    setup = await startOidcSetup({ NODE_ENV: 'development' });
    browser = setup.browser();
    await signIn(setup, browser, `streams-${Date.now()}`);
    const client = apiClient(setup.app);
    const admin = await createUser(setup.app.services, 'ROLE_ADMIN');
    user = await createUser(setup.app.services, 'ROLE_USER');
    const supplier = await newSupplier(client, admin.auth);
    const item = await newItem(client, admin.auth, supplier.id);
    const product = await client
      .post('/api/products')
      .set('Authorization', admin.auth)
      .send({ name: unique('Streamed product'), quantity: 3, price: 4 })
      .expect(201);
    Object.assign(names, { supplier: supplier.name, item: item.name, product: product.body.name as string });
    // The stock-history worker does not run in this process: write the entries it would write.
    await completeHistory(setup.app.services.orm.em.fork());
  });
  after(async () => setup?.close());

  const readWhole = async (res: Response, kind: 'json' | 'csv', needle: string) => {
    expect(res.status).to.equal(200);
    const text = await res.text();
    if (kind === 'json') {
      const rows = JSON.parse(text) as { name?: string; itemName?: string }[];
      expect(rows.some(row => row.name === needle || row.itemName === needle)).to.equal(true);
    } else {
      expect(text.endsWith('\r\n')).to.equal(true);
      expect(text).to.include(needle);
    }
    return text;
  };

  for (const { path, kind, needle } of STREAMED_ROUTES)
    it(`When a signed-in browser reads ${path}, then the whole body arrives, as it does for a bearer token`, async () => {
      const viaSession = await readWhole(
        await browser.request(`${setup.appUrl}${path}`),
        kind,
        names[needle],
      );
      const viaBearer = await readWhole(
        await fetch(`${setup.appUrl}${path}`, { headers: { Authorization: user.auth } }),
        kind,
        names[needle],
      );
      // Nothing was written between the two reads: the same rows, whoever asked.
      expect(viaSession.length).to.equal(viaBearer.length);
    });
});
