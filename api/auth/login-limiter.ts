import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/env.js';
import { TooManyRequestsError, UnauthorizedError } from '../../domain/shared/errors.js';

/** Failed logins allowed per IP (any usernames) per day, and per username (any IPs) per day. */
export const FAILS_PER_IP_PER_DAY = 100;
export const FAILS_PER_USERNAME_PER_DAY = 50;
const DAY = 24 * 60 * 60;

interface Limit {
  limiter: RateLimiterRedis;
  key: (username: string, ip: string) => string;
}

function limiter(redis: Redis, keyPrefix: string, points: number, duration: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration,
    // Redis away: every process still limits on its own (rate-limiter-flexible "insurance strategy").
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${keyPrefix}:mem`, points, duration }),
  });
}

/**
 * Brute-force protection of password login (rate-limiter-flexible "login endpoint protection"): failed
 * attempts are counted per username+IP (LOGIN_RATE_LIMIT_POINTS per LOGIN_RATE_LIMIT_SECONDS), per IP and per
 * username. Once any count is used up, every attempt (even with the right password) is 429 with Retry-After
 * until its window ends. A successful login resets the username+IP count.
 */
export class LoginLimiter {
  private readonly limits: Limit[];
  private readonly usernameAndIp: Limit;

  constructor(redis: Redis, config: Config) {
    const prefix = `${config.redisPrefix}:login`;
    this.usernameAndIp = {
      limiter: limiter(
        redis,
        `${prefix}:user-ip`,
        config.loginRateLimit.points,
        config.loginRateLimit.durationSeconds,
      ),
      key: (username, ip) => `${username}_${ip}`,
    };
    this.limits = [
      this.usernameAndIp,
      { limiter: limiter(redis, `${prefix}:ip`, FAILS_PER_IP_PER_DAY, DAY), key: (_u, ip) => ip },
      {
        limiter: limiter(redis, `${prefix}:user`, FAILS_PER_USERNAME_PER_DAY, DAY),
        key: username => username,
      },
    ];
  }

  /** Runs a login attempt under the limits: 429 before trying when blocked, counts a 401 as a failure. */
  async attempt<T>(rawUsername: string, ip: string, login: () => Promise<T>): Promise<T> {
    const username = rawUsername.trim().toLowerCase();
    const states = await Promise.all(this.limits.map(l => l.limiter.get(l.key(username, ip))));
    const waitMs = Math.max(
      0,
      ...states.map((state, i) =>
        state && state.consumedPoints >= this.limits[i].limiter.points ? state.msBeforeNext : 0,
      ),
    );
    if (waitMs > 0) throw new TooManyRequestsError(waitMs / 1000);
    try {
      const result = await login();
      await this.usernameAndIp.limiter.delete(this.usernameAndIp.key(username, ip));
      return result;
    } catch (error) {
      if (error instanceof UnauthorizedError) await this.recordFailure(username, ip);
      throw error;
    }
  }

  private async recordFailure(username: string, ip: string): Promise<void> {
    // A rejection here means "now over the limit"; the attempt itself still answers 401, the next one 429.
    await Promise.all(
      this.limits.map(l =>
        l.limiter.consume(l.key(username, ip)).catch((rejection: unknown) => {
          if (!(rejection instanceof RateLimiterRes)) throw rejection;
        }),
      ),
    );
  }
}
