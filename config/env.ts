import { randomBytes } from 'node:crypto';
import Joi from 'joi';
import cron from 'node-cron';
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from './config-error.js';
import { postgresConnection } from './postgres-tls.js';
import type { RedisTlsSettings } from './redis-tls.js';

/** Typed, validated, frozen configuration. Nothing else in the code base reads `process.env`. */
export interface Config {
  readonly nodeEnv: 'development' | 'production' | 'test';
  readonly port: number;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly sessionSecret: string;
  readonly jwtSecret: string;
  readonly jwtTtlSeconds: number;
  readonly demoReadonly: boolean;
  readonly publicUrl: string;
  readonly frontendUrl: string;
  readonly corsOrigins: readonly string[];
  readonly oidc: {
    readonly providerId: string;
    readonly issuerUrl: string | undefined;
    readonly clientId: string | undefined;
    readonly clientSecret: string | undefined;
  };
  readonly adminEmails: readonly string[];
  readonly allowedEmails: readonly string[];
  readonly bootstrapAdmin: { readonly username: string; readonly password: string } | undefined;
  readonly seedDemoData: boolean;
  readonly lowStockWebhookUrl: string | undefined;
  readonly webhookSecret: string | undefined;
  /** When set, `GET /metrics` needs it as a bearer token. */
  readonly metricsToken: string | undefined;
  readonly runWorkers: boolean;
  readonly logLevel: string;
  /** Prefix of every BullMQ queue and Redis key the service owns (tests use a unique one per run). */
  readonly redisPrefix: string;
  /** Hard upper bound for the after-commit enqueue on the request path. */
  readonly enqueueTimeoutMs: number;
  /** DB_POOL_MAX when set: the ORM pool's size, which a DB_CONNECTIONS_MAX split leaves as it is. */
  readonly dbPoolMax: number | undefined;
  /** PostgreSQL connections a process may hold on the primary (config/connection-budget.ts); unset: no bound. */
  readonly dbConnectionsMax: number | undefined;
  /** How often each worker process sweeps the outbox for consumers still pending (ms). */
  readonly outboxSweepIntervalMs: number;
  /** BullMQ lock duration and stalled-check interval: how fast a job of a killed worker runs again. */
  readonly workerLockDurationMs: number;
  readonly workerStalledIntervalMs: number;
  readonly workerConcurrency: number;
  readonly lowStockThreshold: number;
  readonly loginRateLimit: { readonly points: number; readonly durationSeconds: number };
  /** PEM of DATABASE_CA_FILE, for every PostgreSQL URL (see config/postgres-tls.ts). */
  readonly databaseCa: string | undefined;
  readonly redisTls: RedisTlsSettings;
  /** Express's `trust proxy`: a hop count, or `loopback` and the like and addresses/CIDRs. */
  readonly trustProxy: number | readonly string[];
  /** A streamed answer whose client takes no data this long is cut and its connection released. */
  readonly streamIdleTimeoutMs: number;
  /** Exports and unpaged history streams at once per user (per client address when anonymous). */
  readonly streamsPerUser: number;
  /** Where streamed answers are spooled (a directory of this process's machine). */
  readonly streamSpoolDir: string;
  /** Disk bytes the spooled answers of one process may take at once. */
  readonly streamSpoolMaxBytes: number;
  /** How long a write waits for a row lock before it answers 503 with Retry-After. */
  readonly lockTimeoutMs: number;
  /** The largest CSV upload an import takes (413 beyond). */
  readonly importMaxBytes: number;
  /** Streaming replicas for analytics and paged history reads (DATABASE_REPLICA_URL); empty: none. */
  readonly databaseReplicaUrls: readonly string[];
  /** A replica further behind than this (by WAL position) gets no reads. */
  readonly replicaMaxLagMs: number;
  /** Sentinel-managed Redis (REDIS_SENTINELS); REDIS_URL then gives only the database, password and TLS. */
  readonly redisSentinel: RedisSentinelSettings | undefined;
  /** Replenishment suggestions (purchasing contract, "How a suggestion is computed" and "Configuration"). */
  readonly replenishment: ReplenishmentSettings;
}

export interface ReplenishmentSettings {
  /** Days of demand the suggestions look at, today included. */
  readonly demandDays: number;
  /** Lead time of suppliers without their own. */
  readonly defaultLeadDays: number;
  /** Probability of not running out during a lead time. */
  readonly serviceLevel: number;
  /** Days of demand an order brings on top of the reorder point. */
  readonly coverDays: number;
  /** When the worker recomputes the suggestions (five fields, UTC). */
  readonly cron: string;
}

export interface RedisSentinelSettings {
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** The master name the Sentinels watch. */
  readonly name: string;
  /** The Sentinels' own password, when they have one. */
  readonly password: string | undefined;
}

export { ConfigError };

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map(s => s.trim())
    .filter(Boolean);

const DURATION = /^(\d+)\s*(s|m|h|d)?$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

function durationSeconds(value: string): number {
  const match = DURATION.exec(value.trim());
  if (!match) throw new ConfigError('JWT_TTL', `must be a duration like 10h, 30m or 3600 (got "${value}")`);
  return Number(match[1]) * UNIT_SECONDS[match[2] ?? 's'];
}

const url = Joi.string().uri({ scheme: ['http', 'https'] });

const schema = Joi.object({
  NODE_ENV: Joi.string()
    .valid('development', 'production', 'test')
    .default('development')
    .description(
      '`production` turns on the strict requirements (secrets required, no demo data, no local OpenID provider)',
    ),
  PORT: Joi.number().integer().min(0).max(65535).default(8080).description('HTTP port of the web process'),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://postgres@127.0.0.1:5432/stockroom')
    .description(
      'PostgreSQL, the system of record; its `sslmode` (`disable`, `require`, `verify-ca`, `verify-full`) governs every connection, as libpq reads it (tests use the database `stockroom_test`)',
    ),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .default('redis://127.0.0.1:6379')
    .description('Redis for queues, sessions, rate limits and stream slots; `rediss://` for TLS'),
  SESSION_SECRET: Joi.string()
    .min(16)
    .description('signs the browser session cookie')
    .meta({ default: 'generated per start in development; required in production' }),
  JWT_SECRET: Joi.string()
    .min(32)
    .messages({ 'string.min': 'must be at least 32 bytes long' })
    .description('signs bearer tokens (HS256); at least 32 bytes')
    .meta({ default: 'generated per start in development; required in production' }),
  JWT_TTL: Joi.string().default('10h').description('bearer token lifetime (`3600`, `30m`, `10h`, `1d`)'),
  APP_DEMO_READONLY: Joi.boolean()
    .default(false)
    .description('demo read-only mode: the named reads are public, every write answers 403'),
  PUBLIC_URL: url
    .description("this service's public base URL (links, the OpenID callback)")
    .meta({ default: '`http://localhost:<PORT>`' }),
  FRONTEND_URL: url
    .default('http://localhost:5173')
    .description('where the browser lands after sign-in and sign-out'),
  CORS_ORIGINS: Joi.string()
    .allow('')
    .description('comma-separated origins allowed for CORS and for cookie-authenticated writes')
    .meta({ default: 'the origin of FRONTEND_URL' }),
  OIDC_PROVIDER_ID: Joi.string()
    .pattern(/^[a-z0-9-]+$/)
    .default('google')
    .description('the `{provider}` path segment of the sign-in URLs'),
  OIDC_ISSUER_URL: url.description(
    'OpenID provider issuer (discovery); unset: browser sign-in off (development starts a local provider)',
  ),
  OIDC_CLIENT_ID: Joi.string().description('client id registered at the OpenID provider'),
  OIDC_CLIENT_SECRET: Joi.string().description('client secret registered at the OpenID provider'),
  ADMIN_EMAILS: Joi.string()
    .allow('')
    .description('comma-separated e-mails that get ROLE_ADMIN at every browser sign-in'),
  ALLOWED_EMAILS: Joi.string()
    .allow('')
    .description(
      'comma-separated e-mails or `@domain` entries allowed to sign in; unset: anyone the provider authenticates',
    ),
  BOOTSTRAP_ADMIN_USERNAME: Joi.string()
    .min(1)
    .max(100)
    .description(
      'creates this password admin at release and at start if no account has the name (with BOOTSTRAP_ADMIN_PASSWORD)',
    ),
  BOOTSTRAP_ADMIN_PASSWORD: Joi.string()
    .min(8)
    .max(1024)
    .description("the bootstrap admin's password (8 to 1,024 bytes); an existing password is never changed"),
  SEED_DEMO_DATA: Joi.boolean()
    .description('adds demo accounts and data to an empty database at start')
    .meta({ default: '`true` in development, else `false`' }),
  LOW_STOCK_WEBHOOK_URL: url.description('where low-stock alerts are POSTed'),
  WEBHOOK_SECRET: Joi.string()
    .min(16)
    .description('HMAC-SHA256 key of the `X-Stockroom-Signature` of webhook deliveries'),
  METRICS_TOKEN: Joi.string()
    .min(16)
    .description(
      'when set, `GET /metrics` needs `Authorization: Bearer <token>` (401 otherwise); production warns at start when unset',
    ),
  REPLENISHMENT_DEFAULT_LEAD_DAYS: Joi.number()
    .integer()
    .min(0)
    .max(365)
    .default(7)
    .description('lead time in days of suppliers without their own (0..365)'),
  RUN_WORKERS: Joi.boolean()
    .default(true)
    .description(
      "also run the workers inside the web process (`npm start`); the Procfile's web line sets `false`",
    ),
  LOG_LEVEL: Joi.string()
    .valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent')
    .default('info')
    .description('pino log level'),
  REDIS_PREFIX: Joi.string()
    // `{name}` is a Redis Cluster hash tag: every key of the service then lives in one slot (BullMQ's advice).
    .pattern(/^(?:[A-Za-z0-9_-]+|\{[A-Za-z0-9_-]+\})$/)
    .default('stockroom')
    .description('prefix of every queue and Redis key (tests use one per run)'),
  ENQUEUE_TIMEOUT_MS: Joi.number()
    .integer()
    .min(10)
    .max(10000)
    .default(200)
    .description('upper bound of the after-commit wake-up call on the request path'),
  DB_POOL_MAX: Joi.number()
    .integer()
    .min(1)
    .max(200)
    .meta({ default: '`10`, or its share of DB_CONNECTIONS_MAX' })
    .description(
      'PostgreSQL connections per process for requests and jobs (the ORM pool); set, it wins over the split',
    ),
  DB_CONNECTIONS_MAX: Joi.number()
    .integer()
    .min(2)
    .max(10000)
    .description(
      'PostgreSQL connections a process may hold on the primary, all pools together; its pools share it (operations.md, Connections) and a process whose explicit pools exceed it refuses to start; unset: the pools keep their own sizes',
    ),
  OUTBOX_SWEEP_INTERVAL_MS: Joi.number()
    .integer()
    .min(50)
    .max(600000)
    .default(1000)
    .description('how often each worker process rings the doorbells of consumers with events still pending'),
  WORKER_LOCK_DURATION_MS: Joi.number()
    .integer()
    .min(1000)
    .max(600000)
    .default(30000)
    .description("BullMQ job lock: how long a killed worker's job stays taken"),
  WORKER_STALLED_INTERVAL_MS: Joi.number()
    .integer()
    .min(500)
    .max(600000)
    .default(30000)
    .description("BullMQ stalled-job check: how soon a killed worker's job runs again"),
  WORKER_CONCURRENCY: Joi.number()
    .integer()
    .min(1)
    .max(100)
    .default(8)
    .description('jobs at once per queue and worker process'),
  LOW_STOCK_THRESHOLD: Joi.number()
    .integer()
    .min(0)
    .default(5)
    .description('product low-stock threshold (`GET /api/products/low-stock`)'),
  LOGIN_RATE_LIMIT_POINTS: Joi.number()
    .integer()
    .min(1)
    .default(5)
    .description('failed password logins allowed per username and client address in each window'),
  LOGIN_RATE_LIMIT_SECONDS: Joi.number()
    .integer()
    .min(1)
    .default(900)
    .description('the window of LOGIN_RATE_LIMIT_POINTS, in seconds'),
  DATABASE_CA_FILE: Joi.string().description(
    'PEM file of the CA that signed the PostgreSQL server certificates, for every PostgreSQL URL; `require` never verifies (use `verify-ca` or `verify-full`)',
  ),
  REDIS_CA_FILE: Joi.string().description(
    'PEM file of the CA of the Redis server (and Sentinels) when TLS is used',
  ),
  REDIS_TLS_REJECT_UNAUTHORIZED: Joi.boolean()
    .default(true)
    .description(
      "`false` accepts an unverifiable Redis certificate (a platform's self-signed one); never the default",
    ),
  TRUST_PROXY: Joi.string()
    .default('loopback')
    .description(
      'which proxies set `X-Forwarded-For`/`-Proto`: `loopback`, a hop count (`1` behind one platform router) or a comma-separated CIDR list',
    ),
  STREAM_IDLE_TIMEOUT_MS: Joi.number()
    .integer()
    .min(100)
    .max(3600000)
    .default(30000)
    .description(
      'a streamed answer whose client takes no data this long is cut and its database connection released',
    ),
  STREAMS_PER_USER: Joi.number()
    .integer()
    .min(1)
    .max(100)
    .default(2)
    .description(
      'exports and unpaged history streams at once per user (per client address when anonymous), across all web processes; 429 beyond',
    ),
  STREAM_SPOOL_DIR: Joi.string()
    .allow('')
    .meta({ default: '`stockroom-spool` in the system temporary directory' })
    .description(
      'directory where each streamed answer is written whole before it is sent (unlinked at once, freed once sent)',
    ),
  STREAM_SPOOL_MAX_MB: Joi.number()
    .integer()
    .min(1)
    .max(1048576)
    .default(2048)
    .description(
      'disk the spooled streamed answers of one web process may take at once; an answer beyond it is 503 with Retry-After',
    ),
  LOCK_TIMEOUT_MS: Joi.number()
    .integer()
    .min(10)
    .max(600000)
    .default(2000)
    .description('how long a write waits for a row lock before answering 503 with Retry-After'),
  IMPORT_MAX_BYTES: Joi.number()
    .integer()
    .min(1024)
    .max(10 * 1024 * 1024 * 1024)
    .default(104857600)
    .description(
      'largest CSV upload an import takes, in bytes (413 beyond); the upload streams to storage, never held whole',
    ),
  DATABASE_REPLICA_URL: Joi.string()
    .allow('')
    .description(
      'comma-separated PostgreSQL URLs of streaming replicas for analytics and paged history reads; a replica that fails never stops start-up',
    ),
  REPLICA_MAX_LAG_MS: Joi.number()
    .integer()
    .min(10)
    .max(3600000)
    .default(1000)
    .description(
      'a replica further behind than this (by WAL position, not by replay timestamp) gets no reads',
    ),
  REDIS_SENTINELS: Joi.string()
    .allow('')
    .description(
      'comma-separated host:port of Redis Sentinels; when set, REDIS_URL only gives the database number, password and TLS (rediss://)',
    ),
  REDIS_SENTINEL_NAME: Joi.string()
    .pattern(/^[A-Za-z0-9._-]+$/)
    .default('stockroom')
    .description('the master name the Sentinels watch'),
  REDIS_SENTINEL_PASSWORD: Joi.string().description("the Sentinels' own password, when they have one"),
  REPLENISHMENT_DEMAND_DAYS: Joi.number()
    .integer()
    .min(7)
    .max(365)
    .default(56)
    .description('days of demand the replenishment suggestions look at, today included (7..365)'),
  REPLENISHMENT_SERVICE_LEVEL: Joi.number()
    .min(0.5)
    .max(0.999)
    .default(0.95)
    .description('probability of not running out during a lead time (0.5..0.999)'),
  REPLENISHMENT_COVER_DAYS: Joi.number()
    .integer()
    .min(1)
    .max(365)
    .default(14)
    .description('days of demand an order brings on top of the reorder point (1..365)'),
  REPLENISHMENT_CRON: Joi.string()
    .custom((value: string) => {
      if (value.trim().split(/\s+/).length !== 5 || !cron.validate(value)) throw new Error('not a cron');
      return value;
    })
    .messages({ 'any.custom': 'must be a cron expression of five fields' })
    .default('30 3 * * *')
    .description('when the worker recomputes the replenishment suggestions (five cron fields, UTC)'),
})
  .and('BOOTSTRAP_ADMIN_USERNAME', 'BOOTSTRAP_ADMIN_PASSWORD')
  .unknown(true);

const WEAK_SECRETS = new Set(['changeme', 'secret', 'change-me-please-change-me-please-32']);

/**
 * Builds the configuration from environment variables. Throws {@link ConfigError} naming the first bad
 * variable; the entry points turn that into a one-line message and a non-zero exit.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value: v, error } = schema.validate(env, { abortEarly: true, convert: true });
  if (error) {
    const detail = error.details[0];
    const missing = detail.context?.missing as string[] | undefined;
    if (missing?.length)
      throw new ConfigError(missing[0], `is required together with ${detail.context?.present}`);
    const variable = String(detail.path[0] ?? detail.context?.key ?? 'configuration');
    throw new ConfigError(variable, detail.message.replace(/^"[^"]+"\s*/, ''));
  }
  const production = v.NODE_ENV === 'production';
  if (production && !v.SESSION_SECRET) throw new ConfigError('SESSION_SECRET', 'is required in production');
  if (production && !v.JWT_SECRET) throw new ConfigError('JWT_SECRET', 'is required in production');
  if (v.JWT_SECRET && WEAK_SECRETS.has(String(v.JWT_SECRET).toLowerCase()))
    throw new ConfigError('JWT_SECRET', 'is a well-known default; choose a random secret');
  if (Boolean(v.OIDC_ISSUER_URL) !== Boolean(v.OIDC_CLIENT_ID))
    throw new ConfigError('OIDC_CLIENT_ID', 'and OIDC_ISSUER_URL must be set together');

  const databaseCa = readPem('DATABASE_CA_FILE', v.DATABASE_CA_FILE);
  postgresConnection(v.DATABASE_URL, databaseCa, 'DATABASE_URL');
  const databaseReplicaUrls = list(v.DATABASE_REPLICA_URL);
  for (const replicaUrl of databaseReplicaUrls) {
    if (
      Joi.string()
        .uri({ scheme: ['postgres', 'postgresql'] })
        .validate(replicaUrl).error
    )
      throw new ConfigError('DATABASE_REPLICA_URL', 'must be comma-separated postgres:// URLs');
    postgresConnection(replicaUrl, databaseCa, 'DATABASE_REPLICA_URL');
  }

  const frontendUrl = String(v.FRONTEND_URL).replace(/\/$/, '');
  const corsOrigins = v.CORS_ORIGINS ? list(v.CORS_ORIGINS) : [new URL(frontendUrl).origin];
  for (const origin of corsOrigins) {
    if (
      Joi.string()
        .uri({ scheme: ['http', 'https'] })
        .validate(origin).error
    )
      throw new ConfigError('CORS_ORIGINS', `contains an invalid origin "${origin}"`);
  }

  const config: Config = {
    nodeEnv: v.NODE_ENV,
    port: v.PORT,
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    sessionSecret: v.SESSION_SECRET ?? randomBytes(32).toString('hex'),
    jwtSecret: v.JWT_SECRET ?? randomBytes(32).toString('hex'),
    jwtTtlSeconds: durationSeconds(v.JWT_TTL),
    demoReadonly: v.APP_DEMO_READONLY,
    publicUrl: String(v.PUBLIC_URL ?? `http://localhost:${v.PORT}`).replace(/\/$/, ''),
    frontendUrl,
    corsOrigins: corsOrigins.map(o => new URL(o).origin),
    oidc: {
      providerId: v.OIDC_PROVIDER_ID,
      issuerUrl: v.OIDC_ISSUER_URL,
      clientId: v.OIDC_CLIENT_ID,
      clientSecret: v.OIDC_CLIENT_SECRET,
    },
    adminEmails: list(v.ADMIN_EMAILS).map(e => e.toLowerCase()),
    allowedEmails: list(v.ALLOWED_EMAILS).map(e => e.toLowerCase()),
    bootstrapAdmin: v.BOOTSTRAP_ADMIN_USERNAME
      ? { username: v.BOOTSTRAP_ADMIN_USERNAME, password: v.BOOTSTRAP_ADMIN_PASSWORD }
      : undefined,
    seedDemoData: v.SEED_DEMO_DATA ?? v.NODE_ENV === 'development',
    lowStockWebhookUrl: v.LOW_STOCK_WEBHOOK_URL,
    webhookSecret: v.WEBHOOK_SECRET,
    metricsToken: v.METRICS_TOKEN,
    runWorkers: v.RUN_WORKERS,
    logLevel: v.LOG_LEVEL,
    redisPrefix: v.REDIS_PREFIX,
    enqueueTimeoutMs: v.ENQUEUE_TIMEOUT_MS,
    dbPoolMax: v.DB_POOL_MAX,
    dbConnectionsMax: v.DB_CONNECTIONS_MAX,
    outboxSweepIntervalMs: v.OUTBOX_SWEEP_INTERVAL_MS,
    workerLockDurationMs: v.WORKER_LOCK_DURATION_MS,
    workerStalledIntervalMs: v.WORKER_STALLED_INTERVAL_MS,
    workerConcurrency: v.WORKER_CONCURRENCY,
    lowStockThreshold: v.LOW_STOCK_THRESHOLD,
    loginRateLimit: { points: v.LOGIN_RATE_LIMIT_POINTS, durationSeconds: v.LOGIN_RATE_LIMIT_SECONDS },
    databaseCa,
    redisTls: {
      ca: readPem('REDIS_CA_FILE', v.REDIS_CA_FILE),
      rejectUnauthorized: v.REDIS_TLS_REJECT_UNAUTHORIZED,
    },
    trustProxy: trustProxy(v.TRUST_PROXY),
    streamIdleTimeoutMs: v.STREAM_IDLE_TIMEOUT_MS,
    streamsPerUser: v.STREAMS_PER_USER,
    streamSpoolDir: v.STREAM_SPOOL_DIR || path.join(tmpdir(), 'stockroom-spool'),
    streamSpoolMaxBytes: v.STREAM_SPOOL_MAX_MB * 1024 * 1024,
    lockTimeoutMs: v.LOCK_TIMEOUT_MS,
    importMaxBytes: v.IMPORT_MAX_BYTES,
    databaseReplicaUrls,
    replicaMaxLagMs: v.REPLICA_MAX_LAG_MS,
    redisSentinel: redisSentinel(v.REDIS_SENTINELS, v.REDIS_SENTINEL_NAME, v.REDIS_SENTINEL_PASSWORD),
    replenishment: {
      demandDays: v.REPLENISHMENT_DEMAND_DAYS,
      defaultLeadDays: v.REPLENISHMENT_DEFAULT_LEAD_DAYS,
      serviceLevel: v.REPLENISHMENT_SERVICE_LEVEL,
      coverDays: v.REPLENISHMENT_COVER_DAYS,
      cron: v.REPLENISHMENT_CRON,
    },
  };
  return deepFreeze(config);
}

/** The admin CLI's password (`npm run user:create`), never part of the service configuration. */
export function readCliPassword(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.STOCKROOM_USER_PASSWORD || undefined;
}

/** The configuration with extra variables layered over the environment (e.g. a local OpenID provider). */
export function loadConfigWith(extra: Record<string, string>): Config {
  return loadConfig({ ...process.env, ...extra });
}

/** A CA file's PEM text, read once at start; a missing or non-PEM file is a configuration error. */
function readPem(variable: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      variable,
      `names a file that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}: ${path})`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new ConfigError(variable, `names a file without a PEM certificate (${path})`);
  return pem;
}

/** REDIS_SENTINELS as host/port pairs (undefined when unset: REDIS_URL names the one server). */
function redisSentinel(
  value: string | undefined,
  name: string,
  password: string | undefined,
): RedisSentinelSettings | undefined {
  const entries = list(value);
  if (entries.length === 0) return undefined;
  const sentinels = entries.map(entry => {
    const match = /^([^:\s]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535)
      throw new ConfigError('REDIS_SENTINELS', `contains "${entry}"; use comma-separated host:port entries`);
    return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port };
  });
  return { sentinels, name, password };
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY as Express's `trust proxy` takes it. `true` (trust every hop) is refused: the left-most
 * X-Forwarded-For entry is whatever the client sent, so per-IP limits could be dodged at will.
 */
function trustProxy(value: string): number | string[] {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const entries = list(trimmed);
  if (entries.length === 0)
    throw new ConfigError('TRUST_PROXY', 'must be loopback, a hop count or a CIDR list');
  for (const entry of entries)
    if (!PROXY_NAMES.has(entry) && !isAddressOrCidr(entry))
      throw new ConfigError(
        'TRUST_PROXY',
        `contains "${entry}"; use loopback, a hop count (1) or addresses/CIDRs`,
      );
  return entries;
}

function isAddressOrCidr(entry: string): boolean {
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  try {
    new BlockList().addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    return true;
  } catch {
    return false;
  }
}

function deepFreeze<T extends object>(obj: T): T {
  for (const value of Object.values(obj)) if (value && typeof value === 'object') deepFreeze(value);
  return Object.freeze(obj);
}

/** The schema itself, for the generated configuration reference (docs/operations.md). */
export { schema as environmentSchema };
