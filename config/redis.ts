import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from './env.js';
import { redisTls } from './redis-tls.js';

/** How long a request-path command may wait for a Sentinel failover to finish before it fails (503 at most). */
const FAILOVER_WAIT_MS = 1500;

/**
 * Two kinds of Redis connection (BullMQ going-to-production guide):
 * - `worker`: blocking commands, retries forever (`maxRetriesPerRequest: null`), so workers ride out outages;
 * - `producer`: used on the request path; it fails fast instead of queueing commands while Redis is away.
 * With REDIS_SENTINELS the connection asks the Sentinels for the master (ioredis' own Sentinel support): a
 * failover closes the clients of the demoted master (Sentinel kills them), and a connection that still meets it
 * reconnects on its READONLY answer; either way the reconnect asks the Sentinels again. The request path lets a
 * command wait up to FAILOVER_WAIT_MS for the new master instead of failing at once. (ioredis'
 * `failoverDetector` is left off: its Sentinel subscriptions survive `quit()` and keep a process alive.)
 */
export function createRedis(
  config: Pick<Config, 'redisUrl' | 'redisTls' | 'redisSentinel'>,
  kind: 'worker' | 'producer',
): Redis {
  const sentinel = config.redisSentinel;
  const options: RedisOptions =
    kind === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: sentinel !== undefined }
      : {
          maxRetriesPerRequest: 1,
          connectTimeout: 2000,
          retryStrategy: times => Math.min(times * 200, 2000),
          ...(sentinel
            ? { enableOfflineQueue: true, commandTimeout: FAILOVER_WAIT_MS }
            : { enableOfflineQueue: false }),
        };
  const tls = redisTls(config.redisUrl, config.redisTls);
  const redis = sentinel
    ? new Redis({
        ...fromUrl(config.redisUrl),
        sentinels: sentinel.sentinels.map(({ host, port }) => ({ host, port })),
        name: sentinel.name,
        sentinelPassword: sentinel.password,
        sentinelTLS: tls,
        enableTLSForSentinelMode: tls !== undefined,
        reconnectOnError: error => (error.message.startsWith('READONLY') ? 2 : false),
        ...options,
        tls,
        lazyConnect: false,
      })
    : new Redis(config.redisUrl, { ...options, tls, lazyConnect: false });
  // Connection errors are reported by health and enqueue paths; an unhandled 'error' event would crash the process.
  redis.on('error', () => undefined);
  return redis;
}

/** What REDIS_URL still says when the Sentinels name the server: database number, user and password. */
function fromUrl(url: string): Pick<RedisOptions, 'db' | 'username' | 'password'> {
  const parsed = new URL(url);
  return {
    db: Number(parsed.pathname.slice(1) || 0),
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
  };
}
