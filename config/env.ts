import { randomBytes } from 'node:crypto';
import Joi from 'joi';

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
  /** A streamed answer whose client takes no data this long is cut and its connection released. */
  readonly streamIdleTimeoutMs: number;
  /** Exports and unpaged history streams at once per user (per client address when anonymous). */
  readonly streamsPerUser: number;
  /** How long a write waits for a row lock before it answers 503 with Retry-After. */
  readonly lockTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid configuration: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }
}

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
  PUBLIC_URL: url.default('http://localhost:8080'),
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
    .pattern(/^[A-Za-z0-9_-]+$/)
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
  STREAM_IDLE_TIMEOUT_MS: Joi.number().integer().min(100).max(3600000).default(30000),
  STREAMS_PER_USER: Joi.number().integer().min(1).max(100).default(2),
  LOCK_TIMEOUT_MS: Joi.number().integer().min(10).max(600000).default(2000),
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
    publicUrl: String(v.PUBLIC_URL).replace(/\/$/, ''),
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
    streamIdleTimeoutMs: v.STREAM_IDLE_TIMEOUT_MS,
    streamsPerUser: v.STREAMS_PER_USER,
    lockTimeoutMs: v.LOCK_TIMEOUT_MS,
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

function deepFreeze<T extends object>(obj: T): T {
  for (const value of Object.values(obj)) if (value && typeof value === 'object') deepFreeze(value);
  return Object.freeze(obj);
}

/** The schema itself, for the generated configuration reference (docs/operations.md). */
export { schema as environmentSchema };
