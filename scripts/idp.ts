import { parseArgs } from 'node:util';
import { loadConfig } from '../config/env.js';
import { oidcPaths } from '../api/auth/oidc.js';
import { DEFAULT_LOCAL_IDP_PORT, LOCAL_CLIENT_SECRET, startLocalIdp } from './local-idp.js';
import { runScript } from './run-script.js';

/**
 * `npm run idp [-- --port 9400]`: a local OpenID provider for signing in to a separately started Stockroom.
 * Prints the environment to start Stockroom with. Stops on Ctrl-C.
 */
await runScript(async () => {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: String(DEFAULT_LOCAL_IDP_PORT) } },
  });
  const config = loadConfig();
  const callback = `${config.publicUrl}${oidcPaths(config.oidc.providerId).callback}`;
  const idp = await startLocalIdp({
    port: Number(values.port),
    redirectUris: [callback],
    clientSecret: LOCAL_CLIENT_SECRET,
  });
  const env = { ...idp.env(), ADMIN_EMAILS: idp.accounts[0].email };
  console.log(`Local OpenID provider: ${idp.issuer} (callback ${callback})`);
  console.log('Accounts (any password; any other login name works too, as <name>@stockroom.local):');
  for (const a of idp.accounts) console.log(`  ${a.login.padEnd(8)} ${a.email}`);
  console.log('\nStart Stockroom with:');
  console.log(
    `  ${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')} npm start`,
  );
  console.log(`\nThen sign in at ${config.publicUrl}${oidcPaths(config.oidc.providerId).authorization}`);
  await new Promise<void>(resolve => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  await idp.close();
});
