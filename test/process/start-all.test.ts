import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { DEFAULT_LOCAL_IDP_PORT } from '../../scripts/local-idp.js';
import { expect } from 'chai';
import { testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait-for.js';

describe('The run command (scripts/start-all.ts)', function () {
  this.timeout(60000);

  it('When started, then health is 200, the database check is UP, and SIGTERM stops it cleanly', async () => {
    const port = await freePort();
    const child = spawnStockroom([], testEnv({ PORT: String(port), RUN_WORKERS: 'true', LOG_LEVEL: 'info' }));
    try {
      await waitForHttp(`http://127.0.0.1:${port}/api/health`);
      const db = (await (await fetch(`http://127.0.0.1:${port}/api/health/db`)).json()) as Record<
        string,
        string
      >;
      expect(db.status).to.equal('UP');
      expect(db.databaseSeesIp).to.be.a('string').and.not.equal('');
      child.kill('SIGTERM');
      const code = await waitForExit(child, 10000);
      expect(code, child.output()).to.equal(0);
      expect(child.output()).to.contain('shutting down');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('When a request is in flight at SIGTERM, then it completes and new connections are refused', async () => {
    const port = await freePort();
    const child = spawnStockroom(['--web'], testEnv({ PORT: String(port) }));
    try {
      await waitForHttp(`http://127.0.0.1:${port}/api/health`);
      // A login whose body is held back: once the server answers "100 Continue" it has parsed the request and
      // its handler waits for the body, so the request is really in flight when SIGTERM arrives.
      const body = JSON.stringify({ username: 'nobody@example.test', password: 'not-the-password' });
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', chunk => (received += chunk.toString()));
      const closed = new Promise(resolve => socket.once('close', resolve));
      socket.write(
        `POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      );
      await waitFor(() => received.includes('100 Continue'), 10000);
      child.kill('SIGTERM');
      socket.write(body);
      await closed;
      expect(received).to.match(/HTTP\/1\.1 401 /);
      expect(await waitForExit(child, 10000)).to.equal(0);
      let refused = false;
      try {
        await fetch(`http://127.0.0.1:${port}/api/health`);
      } catch {
        refused = true;
      }
      expect(refused).to.equal(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it("When the local OpenID provider's usual port is taken, then development sign-in still works on another port", async () => {
    const blocker = createServer();
    // Whoever holds 9400 (this server, or anything else already there): the provider must go elsewhere.
    await new Promise<void>(resolve => {
      blocker.once('error', () => resolve());
      blocker.listen(DEFAULT_LOCAL_IDP_PORT, '127.0.0.1', resolve);
    });
    const port = await freePort();
    const env = testEnv({ NODE_ENV: 'development', PORT: String(port), LOG_LEVEL: 'info' });
    delete env.OIDC_ISSUER_URL;
    const child = spawnStockroom(['--web'], { ...env, PUBLIC_URL: `http://127.0.0.1:${port}` });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/api/health`, 60000);
      const res = await fetch(`http://127.0.0.1:${port}/oauth2/authorization/google`, { redirect: 'manual' });
      expect(res.status, child.output()).to.equal(302);
      const provider = new URL(res.headers.get('location')!);
      expect(provider.hostname).to.equal('127.0.0.1');
      expect(provider.port).to.not.equal(String(DEFAULT_LOCAL_IDP_PORT));
      const page = await fetch(provider, { redirect: 'manual' });
      expect(page.status, await page.text()).to.be.oneOf([200, 303]);
    } finally {
      child.kill('SIGKILL');
      await new Promise(resolve => blocker.close(resolve));
    }
  });

  it('When a setting is invalid, then the process exits non-zero naming the variable', async () => {
    const child = spawnStockroom([], testEnv({ JWT_SECRET: 'short' }));
    const code = await waitForExit(child, 20000);
    expect(code).to.equal(2);
    expect(child.output()).to.contain('JWT_SECRET');
  });
  it('When started by a Node.js older than 22.17, then it exits 1 saying how to get the right Node, before loading the app', async function () {
    // The machine's own Node where it is older (the system Node 20 of these machines); without one, nothing to run.
    const old = '/usr/bin/node';
    const version = existsSync(old) ? execFileSync(old, ['--version'], { encoding: 'utf8' }).trim() : '';
    const [major, minor] = version.slice(1).split('.').map(Number);
    if (!version || major > 22 || (major === 22 && minor >= 17)) this.skip();
    for (const entry of ['scripts/start-all.ts', 'scripts/migrate.ts']) {
      const run = spawnSync(old, ['--import', 'tsx', entry, '--web'], {
        env: { ...process.env, ...testEnv({ PORT: String(await freePort()) }) },
        encoding: 'utf8',
        timeout: 30000,
      });
      expect(run.status, `${entry}: ${run.stderr}`).to.equal(1);
      expect(run.stderr).to.contain(`Stockroom needs Node.js 22.17 or newer`);
      expect(run.stderr).to.contain(version);
      expect(run.stderr).to.contain('node_modules/.bin');
    }
  });
});
