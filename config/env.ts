import { randomBytes } from 'node:crypto';
import Joi from 'joi';
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
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
  readonly runWorkers: boolean;
  readonly logLevel: string;
  /** Prefix of every BullMQ queue and Redis key the service owns (tests use a unique one per run). */
  readonly redisPrefix: string;
  /** Hard upper bound for the after-commit enqueue on the request path. */
  readonly enqueueTimeoutMs: number;
  readonly dbPoolMax: number;
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
  /** How long a write waits for a row lock before it answers 503 with Retry-After. */
  readonly lockTimeoutMs: number;
  /** Streaming replicas for analytics and paged history reads (DATABASE_REPLICA_URL); empty: none. */
  readonly databaseReplicaUrls: readonly string[];
  /** A replica further behind than this (by WAL position) gets no reads. */
  readonly replicaMaxLagMs: number;
  /** Sentinel-managed Redis (REDIS_SENTINELS); REDIS_URL then gives only the database, password and TLS. */
  readonly redisSentinel: RedisSentinelSettings | undefined;
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
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  PORT: Joi.number().integer().min(0).max(65535).default(8080),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://postgres@127.0.0.1:5432/stockroom'),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .default('redis://127.0.0.1:6379'),
  SESSION_SECRET: Joi.string().min(16),
  JWT_SECRET: Joi.string().min(32).messages({ 'string.min': 'must be at least 32 bytes long' }),
  JWT_TTL: Joi.string().default('10h'),
  APP_DEMO_READONLY: Joi.boolean().default(false),
  PUBLIC_URL: url,
  FRONTEND_URL: url.default('http://localhost:5173'),
  CORS_ORIGINS: Joi.string().allow(''),
  OIDC_PROVIDER_ID: Joi.string()
    .pattern(/^[a-z0-9-]+$/)
    .default('google'),
  OIDC_ISSUER_URL: url,
  OIDC_CLIENT_ID: Joi.string(),
  OIDC_CLIENT_SECRET: Joi.string(),
  ADMIN_EMAILS: Joi.string().allow(''),
  ALLOWED_EMAILS: Joi.string().allow(''),
  BOOTSTRAP_ADMIN_USERNAME: Joi.string().min(1).max(100),
  BOOTSTRAP_ADMIN_PASSWORD: Joi.string().min(8).max(1024),
  SEED_DEMO_DATA: Joi.boolean(),
  LOW_STOCK_WEBHOOK_URL: url,
  WEBHOOK_SECRET: Joi.string().min(16),
  RUN_WORKERS: Joi.boolean().default(true),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  REDIS_PREFIX: Joi.string()
    // `{name}` is a Redis Cluster hash tag: every key of the service then lives in one slot (BullMQ's advice).
    .pattern(/^(?:[A-Za-z0-9_-]+|\{[A-Za-z0-9_-]+\})$/)
    .default('stockroom'),
  ENQUEUE_TIMEOUT_MS: Joi.number().integer().min(10).max(10000).default(200),
  DB_POOL_MAX: Joi.number().integer().min(1).max(200).default(10),
  OUTBOX_SWEEP_INTERVAL_MS: Joi.number().integer().min(50).max(600000).default(1000),
  WORKER_LOCK_DURATION_MS: Joi.number().integer().min(1000).max(600000).default(30000),
  WORKER_STALLED_INTERVAL_MS: Joi.number().integer().min(500).max(600000).default(30000),
  WORKER_CONCURRENCY: Joi.number().integer().min(1).max(100).default(8),
  LOW_STOCK_THRESHOLD: Joi.number().integer().min(0).default(5),
  LOGIN_RATE_LIMIT_POINTS: Joi.number().integer().min(1).default(5),
  LOGIN_RATE_LIMIT_SECONDS: Joi.number().integer().min(1).default(900),
  DATABASE_CA_FILE: Joi.string(),
  REDIS_CA_FILE: Joi.string(),
  REDIS_TLS_REJECT_UNAUTHORIZED: Joi.boolean().default(true),
  TRUST_PROXY: Joi.string().default('loopback'),
  STREAM_IDLE_TIMEOUT_MS: Joi.number().integer().min(100).max(3600000).default(30000),
  STREAMS_PER_USER: Joi.number().integer().min(1).max(100).default(2),
  LOCK_TIMEOUT_MS: Joi.number().integer().min(10).max(600000).default(2000),
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
    runWorkers: v.RUN_WORKERS,
    logLevel: v.LOG_LEVEL,
    redisPrefix: v.REDIS_PREFIX,
    enqueueTimeoutMs: v.ENQUEUE_TIMEOUT_MS,
    dbPoolMax: v.DB_POOL_MAX,
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
    lockTimeoutMs: v.LOCK_TIMEOUT_MS,
    databaseReplicaUrls,
    replicaMaxLagMs: v.REPLICA_MAX_LAG_MS,
    redisSentinel: redisSentinel(v.REDIS_SENTINELS, v.REDIS_SENTINEL_NAME, v.REDIS_SENTINEL_PASSWORD),
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
