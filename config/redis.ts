import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from './env.js';
import { redisTls } from './redis-tls.js';

/**
 * Two kinds of Redis connection (BullMQ going-to-production guide):
 * - `worker`: blocking commands, retries forever (`maxRetriesPerRequest: null`), so workers ride out outages;
 * - `producer`: used on the request path; it fails fast instead of queueing commands while Redis is away.
 */
export function createRedis(
  config: Pick<Config, 'redisUrl' | 'redisTls'>,
  kind: 'worker' | 'producer',
): Redis {
  const options: RedisOptions =
    kind === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: false }
      : {
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          connectTimeout: 2000,
          retryStrategy: times => Math.min(times * 200, 2000),
        };
  const redis = new Redis(config.redisUrl, {
    ...options,
    tls: redisTls(config.redisUrl, config.redisTls),
    lazyConnect: false,
  });
  // Connection errors are reported by health and enqueue paths; an unhandled 'error' event would crash the process.
  redis.on('error', () => undefined);
  return redis;
}
