import { expect } from 'chai';
import { createLogger } from '../../config/logger.js';
import { closeServices, openServices } from '../../config/services.js';
import { loadConfig } from '../../config/env.js';
import { startServer, type RunningServer } from '../../api/server.js';
import type { Services } from '../../config/services.js';
import { startLocalIdp, type LocalIdp } from '../../scripts/local-idp.js';
import { testEnv } from '../support/test-env.js';
import { createUser } from '../support/users.js';

/** Issue 13, fuzz finding 5: secrets in query strings never reach a log line in clear. */
describe('Log redaction of sensitive query parameters', () => {
  const lines: string[] = [];
  let idp: LocalIdp;
  let services: Services;
  let server: RunningServer;
  let base: string;

  before(async () => {
    idp = await startLocalIdp({ port: 0 });
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    services = await openServices(
      loadConfig(testEnv({ LOG_LEVEL: 'info', ...idp.env(), OIDC_PROVIDER_ID: 'google' })),
      logger,
    );
    server = await startServer(services, 0);
    base = `http://127.0.0.1:${server.port}`;
  });
  after(async () => {
    await server?.stop();
    if (services) await closeServices(services);
    await idp?.close();
  });

  const urlsLogged = () =>
    lines
      .map(line => (JSON.parse(line) as { req?: { url?: string } }).req?.url)
      .filter((url): url is string => typeof url === 'string');

  it('When a JWT comes as ?access_token=, then the log shows the key with a redacted value', async () => {
    const user = await createUser(services);
    lines.length = 0;
    const res = await fetch(`${base}/api/me?access_token=${user.token}&lang=en`);
    expect(res.status).to.equal(401);
    expect(lines.join('\n')).not.to.contain(user.token);
    expect(urlsLogged()).to.include('/api/me?access_token=[Redacted]&lang=en');
  });

  it('When the OIDC callback carries code and state, then neither value is logged', async () => {
    lines.length = 0;
    await fetch(`${base}/login/oauth2/code/google?code=SECRETCODE-4711&state=SECRETSTATE-0815&iss=x`, {
      redirect: 'manual',
    });
    const all = lines.join('\n');
    expect(all).not.to.contain('SECRETCODE-4711');
    expect(all).not.to.contain('SECRETSTATE-0815');
    expect(urlsLogged()).to.include('/login/oauth2/code/google?code=[Redacted]&state=[Redacted]&iss=x');
  });

  it('When other credential-like keys are sent (any case, percent-encoded), then their values are redacted and the rest is kept', async () => {
    const secrets = {
      token: 'v-token-1',
      PASSWORD: 'v-password-2',
      client_secret: 'v-client-secret-3',
      id_token: 'v-id-token-4',
      refresh_token: 'v-refresh-token-5',
      'acc%65ss_token': 'v-encoded-6',
      api_key: 'v-api-key-7',
    };
    const query = Object.entries(secrets)
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
    lines.length = 0;
    await fetch(`${base}/api/inventory/search?name=widget&${query}&page=0`);
    const all = lines.join('\n');
    for (const value of Object.values(secrets)) expect(all).not.to.contain(value);
    const url = urlsLogged().find(u => u.startsWith('/api/inventory/search'));
    expect(url).to.match(/^\/api\/inventory\/search\?name=widget&token=\[Redacted\]&PASSWORD=\[Redacted\]/);
    expect(url).to.match(/&acc%65ss_token=\[Redacted\]&api_key=\[Redacted\]&page=0$/);
  });
});
