import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type BrowserContext } from 'playwright-core';
import { freePort } from '../support/ports.js';
import { PROVIDER_ID, startOidcSetup, type OidcSetup } from '../support/oidc.js';

const CHROMIUM = '/usr/bin/chromium';
const LOOPBACK = /^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//;

/** The tiny front end: `/auth` fetches the profile with the session cookie and shows it. */
function frontPage(appUrl: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>front</title></head><body>
<pre id="profile">loading</pre>
<script>
fetch(${JSON.stringify(`${appUrl}/api/me`)}, { credentials: 'include' })
  .then(r => r.text().then(t => { document.getElementById('profile').textContent = r.status + ' ' + t; }))
  .catch(e => { document.getElementById('profile').textContent = 'error ' + e; });
</script></body></html>`;
}

/** Lists the reference client reads on its pages: each must arrive whole (status and a parsed JSON array). */
const LISTS = ['/api/suppliers', '/api/inventory', '/api/products', '/api/stock-history'];

/** `/lists` reads every list with the session cookie and shows `path status rows` per line, then `done`. */
function listsPage(appUrl: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>lists</title></head><body>
<pre id="lists"></pre>
<script>
const out = document.getElementById('lists');
(async () => {
  for (const path of ${JSON.stringify(LISTS)}) {
    try {
      const r = await fetch(${JSON.stringify(appUrl)} + path, { credentials: 'include' });
      const rows = await r.json();
      out.textContent += path + ' ' + r.status + ' ' + (Array.isArray(rows) ? rows.length : 'not-a-list') + '\\n';
    } catch (e) {
      out.textContent += path + ' error ' + e + '\\n';
    }
  }
  out.textContent += 'done';
})();
</script></body></html>`;
}

describe('Real browser login (playwright-core + Debian chromium)', function () {
  this.timeout(60000);
  let setup: OidcSetup | undefined;
  let front: Server | undefined;
  let context: BrowserContext | undefined;
  let profileDir: string | undefined;
  let frontUrl = '';

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.warn(`      skipped: ${CHROMIUM} is not installed (apt-get install -y chromium)`);
      this.skip();
    }
    const frontPort = await freePort();
    let appUrl = '';
    frontUrl = `http://127.0.0.1:${frontPort}`;
    front = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      if (req.url?.startsWith('/auth')) res.end(frontPage(appUrl));
      else if (req.url?.startsWith('/lists')) res.end(listsPage(appUrl));
      else res.end('<!doctype html><p>front end</p>');
    });
    await new Promise<void>(resolve => front!.listen(frontPort, '127.0.0.1', resolve));
    // NODE_ENV=development: exactly what a newcomer runs (http on loopback, Secure cookies accepted).
    setup = await startOidcSetup({ NODE_ENV: 'development', FRONTEND_URL: frontUrl, CORS_ORIGINS: frontUrl });
    appUrl = setup.appUrl;
    profileDir = mkdtempSync(path.join(tmpdir(), 'stockroom-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    });
    // Nothing leaves the machine (the provider's pages @import web fonts).
    await context.route('**/*', route =>
      LOOPBACK.test(route.request().url()) ? route.continue() : route.abort(),
    );
  });

  after(async () => {
    await context?.close();
    await setup?.close();
    await new Promise<void>(resolve => (front ? front.close(() => resolve()) : resolve()));
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });

  it('When a person signs in through the provider page, then the front end fetches their profile', async () => {
    const page = context!.pages()[0] ?? (await context!.newPage());
    const started = Date.now();
    await page.goto(`${setup!.appUrl}/oauth2/authorization/${PROVIDER_ID}`);
    await page.fill('input[name="login"]', 'alice');
    await page.fill('input[name="password"]', 'any password');
    await page.click('button[type="submit"]');
    await page.waitForURL(url => url.pathname.includes('/interaction/') || url.pathname === '/auth');
    if (page.url().includes('/interaction/')) await page.click('button[type="submit"]');
    await page.waitForURL(url => url.pathname === '/auth');
    await page.waitForFunction(`!/^loading/.test(document.getElementById('profile')?.textContent ?? '')`);
    const text = (await page.textContent('#profile')) ?? '';
    console.log(`      browser login took ${Date.now() - started} ms`);
    expect(text).to.match(/^200 /);
    expect(JSON.parse(text.slice(4))).to.deep.equal({
      email: 'alice@stockroom.local',
      fullName: 'Alice Example',
      role: 'USER',
      pictureUrl: null,
    });
    const cookies = await context!.cookies(setup!.appUrl);
    const session = cookies.find(c => c.name === 'SESSION');
    expect(session).to.include({ httpOnly: true, secure: true, sameSite: 'None', path: '/' });
  });

  it('When the signed-in person opens a page that reads lists, then every streamed list arrives whole', async () => {
    const page = context!.pages()[0] ?? (await context!.newPage());
    await page.goto(`${frontUrl}/lists`);
    await page.waitForFunction(`/done$/.test(document.getElementById('lists')?.textContent ?? '')`);
    const lines = ((await page.textContent('#lists')) ?? '').split('\n').slice(0, -1);
    expect(lines).to.have.length(LISTS.length);
    for (const [i, line] of lines.entries()) expect(line).to.match(new RegExp(`^${LISTS[i]} 200 \\d+$`));
  });
});
