import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from './errors.js';
import { withTimeout } from './with-timeout.js';

/**
 * A slot is a lease in a Redis sorted set (member = token, score = expiry by Redis's clock), renewed while its
 * stream runs: a web process that dies mid-stream frees its slots when their lease ends.
 */
const LEASE_MS = 60_000;
const RENEW_EVERY_MS = LEASE_MS / 3;
/** How long the request path waits for Redis before it counts in this process alone. */
const REDIS_WAIT_MS = 1000;
/** What a caller over its bound is told to wait: a stream of theirs has to end first, which takes a while. */
export const STREAM_SLOT_RETRY_AFTER_SECONDS = 5;

const NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS[1] the owner's set; ARGV limit, lease ms, token. 1 = taken, 0 = every slot in use. */
const ACQUIRE = `${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** KEYS[1] the owner's set; ARGV lease ms, token. Extends a lease that is still held. */
const RENEW = `${NOW_MS}
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1`;

export interface StreamSlot {
  /** Gives the slot back (idempotent). */
  release(): void;
}

/**
 * Bounds the long streamed answers (exports, unpaged history) per owner (a user, or a client address when
 * anonymous) across every web process, in Redis. When Redis cannot be reached the bound still holds within
 * each process (counted in memory), as the login limiter's insurance does.
 */
export class StreamSlots {
  private readonly local = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly perOwner: number,
    private readonly onRedisError: (error: unknown) => void = () => undefined,
  ) {}

  /** Takes one of `owner`'s slots, or throws 429 with Retry-After when all are in use. */
  async acquire(owner: string): Promise<StreamSlot> {
    const key = `${this.prefix}:stream-slots:${owner}`;
    const token = randomUUID();
    let taken: unknown;
    try {
      taken = await withTimeout(
        this.redis.eval(ACQUIRE, 1, key, this.perOwner, LEASE_MS, token),
        REDIS_WAIT_MS,
        () => new Error('stream slot: Redis did not answer in time'),
      );
    } catch (error) {
      this.onRedisError(error);
      return this.acquireLocally(owner);
    }
    if (taken !== 1) throw this.overTheBound();
    const renew = setInterval(() => {
      this.redis.eval(RENEW, 1, key, LEASE_MS, token).catch(this.onRedisError);
    }, RENEW_EVERY_MS);
    renew.unref();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        // If Redis cannot be told, the lease ends on its own within LEASE_MS.
        this.redis.zrem(key, token).catch(this.onRedisError);
      },
    };
  }

  private acquireLocally(owner: string): StreamSlot {
    const held = this.local.get(owner) ?? 0;
    if (held >= this.perOwner) throw this.overTheBound();
    this.local.set(owner, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.local.get(owner) ?? 1) - 1;
        if (left > 0) this.local.set(owner, left);
        else this.local.delete(owner);
      },
    };
  }

  private overTheBound(): TooManyRequestsError {
    return new TooManyRequestsError(STREAM_SLOT_RETRY_AFTER_SECONDS, 'error.too.many.streams', {
      limit: this.perOwner,
    });
  }
}
