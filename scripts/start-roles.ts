import { loadConfig, loadConfigWith, type Config } from '../config/env.js';
import { closeServices, openServices } from '../config/services.js';
import { runScript } from './run-script.js';
import { warnWhenAutovacuumIsOff } from '../config/autovacuum-check.js';
import { checkConnections } from '../config/connection-check.js';
import type { LocalIdp } from './local-idp.js';
import type { RunningServer } from '../api/server.js';
import type { RunningWorkers } from '../workers/main.js';

/**
 * `npm start`: migrations, start-up data, then the API and (unless RUN_WORKERS=false) the workers in one
 * process. `--web` or `--worker` runs one role only (the Procfile's lines). Each role's modules are imported
 * only when the role runs, so a web process holds no worker code and a worker no web code; the local OpenID
 * provider is loaded only in development.
 */
await runScript(async () => {
  const roles = process.argv.slice(2);
  const web = roles.length === 0 || roles.includes('--web');
  let config = loadConfig();
  let idp: LocalIdp | undefined;
  if (web && config.nodeEnv === 'development' && !config.oidc.issuerUrl)
    ({ config, idp } = await withLocalIdp(config));
  await checkConnections(config);
  const workersWanted = roles.includes('--worker') || (roles.length === 0 && config.runWorkers);
  if (roles.length === 0 && config.nodeEnv !== 'production') {
    const { createDatabases } = await import('./create-databases.js');
    await createDatabases(config.databaseUrl, [], config.databaseCa);
  }
  const services = await openServices(config, undefined, { web, worker: workersWanted });
  const log = services.logger;
  await warnWhenAutovacuumIsOff(services.orm, log);
  if (roles.length === 0) {
    const { migrate } = await import('../config/database.js');
    const applied = await migrate(services.orm);
    if (applied.length) log.info({ applied }, 'migrations applied');
    const { prepareData } = await import('./prepare-data.js');
    await prepareData(services);
  }
  let server: RunningServer | undefined;
  let workers: RunningWorkers | undefined;
  if (web) {
    const { startServer } = await import('../api/server.js');
    services.probe.start();
    server = await startServer(services);
    if (config.nodeEnv === 'production' && !config.metricsToken)
      log.warn('METRICS_TOKEN is unset: GET /metrics answers anyone who can reach this process');
    log.info({ port: server.port, docs: `${config.publicUrl}/api/docs` }, 'Stockroom API listening');
    if (idp) {
      const { oidcPaths } = await import('../api/auth/oidc.js');
      log.info(
        {
          issuer: idp.issuer,
          signIn: `${config.publicUrl}${oidcPaths(config.oidc.providerId).authorization}`,
          accounts: idp.accounts.map(a => a.login),
        },
        'development: browser login uses the local OpenID provider (any password)',
      );
    }
  }
  if (workersWanted) {
    const { startWorkers } = await import('../workers/main.js');
    workers = startWorkers(services);
    log.info({ queues: workers.workers.map(w => w.name) }, 'workers started');
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // Inside a platform's 30 s: the server's drain deadline (20 s), then the pools close.
    const force = setTimeout(() => process.exit(1), 27000);
    force.unref();
    await Promise.all([server?.stop(), workers?.close()]);
    await closeServices(services);
    await idp?.close();
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(signal));
});

/**
 * Development without OIDC_ISSUER_URL: start the local OpenID provider in-process and wire Stockroom to it
 * (the configuration is frozen, so it is rebuilt with the extra variables). When its usual port is taken (a
 * second checkout running), it takes a free one: the app follows the issuer wherever it listens.
 */
async function withLocalIdp(config: Config): Promise<{ config: Config; idp?: LocalIdp }> {
  try {
    const { DEFAULT_LOCAL_IDP_PORT, LOCAL_CLIENT_SECRET, startLocalIdp } = await import('./local-idp.js');
    const { oidcPaths } = await import('../api/auth/oidc.js');
    const start = (port: number) =>
      startLocalIdp({
        port,
        redirectUris: [`${config.publicUrl}${oidcPaths(config.oidc.providerId).callback}`],
        clientSecret: LOCAL_CLIENT_SECRET,
      });
    const idp = await start(DEFAULT_LOCAL_IDP_PORT).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') throw error;
      return start(0);
    });
    const extra: Record<string, string> = idp.env();
    if (config.adminEmails.length === 0) extra.ADMIN_EMAILS = idp.accounts[0].email;
    return { config: loadConfigWith(extra), idp };
  } catch (error) {
    console.warn(`local OpenID provider not started (${(error as Error).message}); browser login is off`);
    return { config };
  }
}
