import type { ConnectionOptions } from 'node:tls';

/** REDIS_CA_FILE (read) and REDIS_TLS_REJECT_UNAUTHORIZED, as the configuration holds them. */
export interface RedisTlsSettings {
  /** PEM of the CA that signed the Redis server's (and Sentinels') certificates; the system's CAs when absent. */
  readonly ca: string | undefined;
  /** false only as an explicit opt-in (a platform's self-signed certificate); verified by default. */
  readonly rejectUnauthorized: boolean;
}

/**
 * ioredis's `tls` option for a Redis URL: undefined for `redis://` (plain TCP, as always), the TLS options for
 * `rediss://`. The certificate is verified (chain and host name) unless REDIS_TLS_REJECT_UNAUTHORIZED=false.
 * Every Redis connection of the service is made with it: sessions, queues, workers, limiter, pub/sub, and the
 * Sentinels' connections (`sentinelTLS`) with REDIS_URL's scheme deciding for them too.
 */
export function redisTls(url: string, settings: RedisTlsSettings): ConnectionOptions | undefined {
  if (!/^rediss:/i.test(url)) return undefined;
  return {
    ...(settings.ca === undefined ? {} : { ca: settings.ca }),
    rejectUnauthorized: settings.rejectUnauthorized,
  };
}

/** The host a Redis URL names, for start-up messages. */
export function redisHost(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || '127.0.0.1'}:${parsed.port || '6379'}`;
  } catch {
    return 'unknown host';
  }
}
