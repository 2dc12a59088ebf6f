import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { createLogger } from '../../config/logger.js';
import { closeServices, openServices } from '../../config/services.js';
import { loadConfig } from '../../config/env.js';
import { startServer } from '../../api/server.js';
import { testEnv } from '../support/test-env.js';
import { createUser } from '../support/users.js';

describe('Security headers and log hygiene', () => {
  it('When any route family answers, including errors, then the helmet headers are present', async () => {
    const user = await createUser(testApp().services);
    const responses = [
      await api().get('/api/health').expect(200),
      await api().get('/api/me').set('Authorization', user.auth).expect(200),
      await api().get('/api/me').expect(401),
      await api().get('/api/unknown').expect(404),
      await api().post('/api/auth/login').send({}).expect(400),
    ];
    for (const res of responses) {
      expect(res.headers['content-security-policy']).to.be.a('string');
      expect(res.headers['strict-transport-security']).to.match(/max-age=(\d+)/);
      expect(Number(/max-age=(\d+)/.exec(res.headers['strict-transport-security'])![1])).to.be.at.least(
        31536000,
      );
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      expect(res.headers['referrer-policy']).to.equal('no-referrer');
      expect(res.headers['x-frame-options']).to.equal('SAMEORIGIN');
      expect(res.headers['x-powered-by']).to.equal(undefined);
      expect(res.headers['cache-control']).to.equal('no-store');
    }
  });

  it('When the API answers, then its Content-Security-Policy lets nothing load or frame it; HTML pages get the page policy', async () => {
    const json = await api().get('/api/health').expect(200);
    expect(json.headers['content-security-policy']).to.equal("default-src 'none';frame-ancestors 'none'");
    const page = await api().get('/api/docs/').expect(200);
    expect(page.headers['content-type']).to.match(/^text\/html/);
    expect(page.headers['content-security-policy']).to.include("script-src 'self'");
    expect(page.headers['content-security-policy']).to.include("default-src 'self'");
    // The headers that only mean something for a document come with the pages, not with the JSON answers.
    expect(page.headers['cross-origin-opener-policy']).to.equal('same-origin');
    expect(page.headers['x-frame-options']).to.equal('SAMEORIGIN');
    expect(json.headers['cross-origin-opener-policy']).to.equal(undefined);
    expect(json.headers['x-dns-prefetch-control']).to.equal(undefined);
    expect(json.headers['cross-origin-resource-policy']).to.equal('same-origin');
  });

  it('When a preflight comes from an unlisted origin, then no CORS grant; a listed origin gets credentials', async () => {
    const evil = await api().get('/api/health').set('Origin', 'https://evil.example');
    expect(evil.headers['access-control-allow-origin']).to.equal(undefined);
    expect(evil.headers['access-control-allow-credentials']).to.equal(undefined);
    const front = await api().get('/api/health').set('Origin', 'https://front.example');
    expect(front.headers['access-control-allow-origin']).to.equal('https://front.example');
    expect(front.headers['access-control-allow-credentials']).to.equal('true');
  });

  it('When a header is larger than Node allows, then the request is refused without a 5xx', async () => {
    const res = await fetch(`http://127.0.0.1:${testApp().server.port}/api/health`, {
      headers: { 'X-Big': 'x'.repeat(20 * 1024) },
    });
    expect(res.status).to.equal(431);
  });

  it('When requests carry credentials and control characters, then logs are single-line JSON with secrets redacted', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const services = await openServices(loadConfig(testEnv({ LOG_LEVEL: 'info' })), logger);
    const server = await startServer(services, 0);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      await fetch(`${base}/api/me`, {
        headers: { Authorization: 'Bearer secret-token-value', Cookie: 'SESSION=secret-cookie' },
      });
      await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'someone\r\n{"level":60}', password: 'hunter2-password' }),
      });
      await fetch(`${base}/api/x%0d%0a%1b[31mred`);
      expect(lines.length).to.be.at.least(3);
      for (const line of lines) {
        expect(line.trimEnd().split('\n')).to.have.length(1);
        expect(() => JSON.parse(line) as unknown).not.to.throw();
        expect(line).not.to.contain('secret-token-value');
        expect(line).not.to.contain('secret-cookie');
        expect(line).not.to.contain('hunter2-password');
        expect(line).not.to.contain('\u001b');
      }
    } finally {
      await server.stop();
      await closeServices(services);
    }
  });
});
