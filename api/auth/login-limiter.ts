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
 * Brute-force protection of password login (rate-limiter-flexible "login endpoint protection"): attempts are
 * counted per username+IP (LOGIN_RATE_LIMIT_POINTS per LOGIN_RATE_LIMIT_SECONDS), per IP and per username.
 * Each attempt takes its points BEFORE the password is checked (consume is atomic in Redis), so however many
 * attempts arrive at once, no more passwords are checked than the budgets allow; once any budget is used up,
 * every attempt (even with the right password) is 429 with Retry-After until its window ends. Only a 401 keeps
 * its points: a success resets the username+IP count and gives the others back, and an attempt that was
 * refused or could not be checked (the database away) gives back what it took.
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

  /** Runs a login attempt under the limits: 429 when a budget is used up; a 401 keeps its points. */
  async attempt<T>(rawUsername: string, ip: string, login: () => Promise<T>): Promise<T> {
    const username = rawUsername.trim().toLowerCase();
    const outcomes = await Promise.allSettled(this.limits.map(l => l.limiter.consume(l.key(username, ip))));
    const taken = this.limits.filter((_, i) => outcomes[i].status === 'fulfilled');
    const refusals = outcomes.flatMap(o => (o.status === 'rejected' ? [o.reason as unknown] : []));
    if (refusals.length > 0) {
      await this.giveBack(taken, username, ip);
      const over = refusals.filter((r): r is RateLimiterRes => r instanceof RateLimiterRes);
      // Not a refusal but a failure of the store (no insurance could answer): the error handler's 5xx.
      if (over.length < refusals.length) throw refusals.find(r => !(r instanceof RateLimiterRes)) as Error;
      throw new TooManyRequestsError(Math.max(...over.map(r => r.msBeforeNext)) / 1000);
    }
    let result: T;
    try {
      result = await login();
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) await this.giveBack(taken, username, ip);
      throw error;
    }
    await this.usernameAndIp.limiter.delete(this.usernameAndIp.key(username, ip));
    await this.giveBack(
      taken.filter(l => l !== this.usernameAndIp),
      username,
      ip,
    );
    return result;
  }

  private async giveBack(limits: Limit[], username: string, ip: string): Promise<void> {
    await Promise.all(limits.map(l => l.limiter.reward(l.key(username, ip), 1)));
  }
}
