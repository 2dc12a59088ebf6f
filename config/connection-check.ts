import pg from 'pg';
import { Redis } from 'ioredis';
import type { Config } from './env.js';
import { postgresConnection, settleSslmode } from './postgres-tls.js';
import { redisHost, redisTls } from './redis-tls.js';

/** Start-up gives the services this long in all (a platform stops a dyno that is not up within its own bound). */
const BUDGET_MS = 5000;

/** A service Stockroom cannot use at start-up: `message` is the one line to log (service, host, setting). */
export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS|ERR_SSL|EPROTO/;
const TRANSIENT = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN', '57P03']);

/**
 * Opens one connection to PostgreSQL and one to Redis, as the service's pools would, before anything else uses
 * them. A TLS or authentication failure throws {@link ConnectionError} at once; a server that is not reachable
 * (yet) is tried again until the start-up budget is spent. Without this, the worker's Redis connection retries
 * for ever without a word, and a pool's TLS error surfaces as a bare stack naming neither service nor setting.
 */
export async function checkConnections(
  config: Pick<Config, 'databaseUrl' | 'databaseCa' | 'redisUrl' | 'redisTls'>,
  services: readonly ('postgres' | 'redis')[] = ['postgres', 'redis'],
  budgetMs = BUDGET_MS,
): Promise<void> {
  const deadline = Date.now() + budgetMs;
  await Promise.all(
    services.map(service =>
      untilDeadline(deadline, () => (service === 'postgres' ? checkPostgres(config) : checkRedis(config))),
    ),
  );
}

interface Attempt {
  /** The failure, or undefined when the service answered. */
  failure?: ConnectionError;
  transient?: boolean;
}

async function untilDeadline(deadline: number, attempt: () => Promise<Attempt>): Promise<void> {
  for (;;) {
    const { failure, transient } = await attempt();
    if (!failure) return;
    if (!transient || Date.now() + 500 > deadline) throw failure;
    await new Promise(resolve => setTimeout(resolve, 500));
  }
}

async function checkPostgres(config: Pick<Config, 'databaseUrl' | 'databaseCa'>): Promise<Attempt> {
  const database = postgresConnection(await settleSslmode(config.databaseUrl), config.databaseCa);
  const url = new URL(database.connectionString);
  const where = `PostgreSQL at ${database.host}:${url.port || 5432} (DATABASE_URL, sslmode=${database.sslmode})`;
  const client = new pg.Client({
    connectionString: database.connectionString,
    ssl: database.ssl,
    connectionTimeoutMillis: 3000,
    application_name: 'stockroom-start',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return {};
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    // The server answered and accepted TLS and the credentials: a missing database is created or reported later.
    if (code === '3D000') return {};
    const fail = (reason: string, setting: string, transient = false): Attempt => ({
      failure: new ConnectionError(`${where}: ${reason}; check ${setting}`),
      transient,
    });
    if ((code && TLS_CODE.test(code)) || /certificate|ssl|tls/i.test(message)) {
      if (/does not support SSL/i.test(message))
        return fail('the server does not offer TLS', "DATABASE_URL's sslmode (disable for a plain server)");
      return fail(`TLS failed (${message})`, "DATABASE_CA_FILE and DATABASE_URL's sslmode and host");
    }
    if (code === '28000' && /no encryption/i.test(message))
      return fail(
        'the server refuses unencrypted connections',
        "DATABASE_URL's sslmode (require, verify-ca or verify-full)",
      );
    if (code === '28P01' || code === '28000')
      return fail(`authentication failed (${message})`, "DATABASE_URL's user and password");
    const transient = (code !== undefined && TRANSIENT.has(code)) || /timeout|terminated/i.test(message);
    return fail(`not reachable (${code ?? message})`, "DATABASE_URL's host and port", transient);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function checkRedis(config: Pick<Config, 'redisUrl' | 'redisTls'>): Promise<Attempt> {
  const tls = redisTls(config.redisUrl, config.redisTls);
  const where = `Redis at ${redisHost(config.redisUrl)} (REDIS_URL, ${tls ? 'TLS' : 'no TLS'})`;
  const client = new Redis(config.redisUrl, {
    tls,
    lazyConnect: true,
    connectTimeout: 3000,
    commandTimeout: 3000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: (Error & { code?: string }) | undefined;
  client.on('error', (error: Error) => (lastError = error));
  try {
    await client.connect();
    await client.ping();
    return {};
  } catch (thrown) {
    const error = lastError ?? (thrown as Error & { code?: string });
    const { code, message } = error;
    const fail = (reason: string, setting: string, transient = false): Attempt => ({
      failure: new ConnectionError(`${where}: ${reason}; check ${setting}`),
      transient,
    });
    if ((code && TLS_CODE.test(code)) || /certificate|ssl|tls/i.test(message))
      return fail(
        `TLS failed (${message})`,
        'REDIS_CA_FILE (or REDIS_TLS_REJECT_UNAUTHORIZED=false for a self-signed certificate)',
      );
    if (/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(message))
      return fail(`authentication failed (${message})`, "REDIS_URL's user and password");
    const hint = tls
      ? "REDIS_URL's host and port"
      : "REDIS_URL's host and port (rediss:// when the server speaks TLS)";
    return fail(`not reachable (${code ?? message})`, hint, true);
  } finally {
    client.disconnect();
  }
}
