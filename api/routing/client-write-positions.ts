import type { Redis } from 'ioredis';
import { withTimeout } from '../../domain/shared/with-timeout.js';

/**
 * Ends a write: one fewer in flight, and the client's position raised to ARGV[1] (never lowered: writes of one
 * client may end out of order). KEYS[1] the client's hash; ARGV[2] its time to live (ms).
 */
const END_WRITE = `
local pending = redis.call('HINCRBY', KEYS[1], 'pending', -1)
if pending < 0 then redis.call('HSET', KEYS[1], 'pending', 0) end
local lsn = tonumber(redis.call('HGET', KEYS[1], 'lsn') or '0')
if tonumber(ARGV[1]) > lsn then redis.call('HSET', KEYS[1], 'lsn', ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return pending`;

type WithEndWrite = Redis & {
  stockroomEndWrite(key: string, lsn: string, ttlMs: number): Promise<number>;
};

/**
 * Read-your-writes across web processes: per client (user id) in Redis, the number of its writes in flight and
 * the primary's WAL position after its last write. A client's read may go to a replica only when none of its
 * writes is in flight and the replica has replayed that position. A write is counted before it starts and its
 * position recorded after its answer: a read that arrives in between sees it in flight and goes to the primary.
 * The hash lives `ttlMs` after the client's last write (longer than any write and any usable replica's lag), so
 * a process killed in the middle of a write only keeps that client on the primary for that long. Redis away:
 * reads go to the primary.
 */
export class ClientWritePositions {
  private readonly redis: WithEndWrite;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs: number,
    private readonly timeoutMs: number,
  ) {
    redis.defineCommand('stockroomEndWrite', { numberOfKeys: 1, lua: END_WRITE });
    this.redis = redis as WithEndWrite;
  }

  private key(client: number): string {
    return `${this.prefix}:rw:${client}`;
  }

  private bounded<T>(work: Promise<T>): Promise<T> {
    return withTimeout(work, this.timeoutMs, () => new Error('Redis did not answer in time'));
  }

  /** Counts a write as in flight (best effort: with Redis away, the client's reads go to the primary anyway). */
  async begin(client: number): Promise<void> {
    if (this.redis.status !== 'ready') return;
    const key = this.key(client);
    await this.bounded(this.redis.multi().hincrby(key, 'pending', 1).pexpire(key, this.ttlMs).exec()).catch(
      () => undefined,
    );
  }

  /** The write is over: its client's position is at least `lsn`. */
  async end(client: number, lsn: number): Promise<void> {
    await this.bounded(this.redis.stockroomEndWrite(this.key(client), String(lsn), this.ttlMs));
  }

  /**
   * The WAL position a replica must have replayed to serve this client: 0 with no recent write, Infinity while
   * a write is in flight; undefined when Redis cannot tell (read on the primary).
   */
  async floor(client: number): Promise<number | undefined> {
    // Redis away (or between masters): no wait for a timeout, the read goes to the primary.
    if (this.redis.status !== 'ready') return undefined;
    try {
      const [pending, lsn] = await this.bounded(this.redis.hmget(this.key(client), 'pending', 'lsn'));
      if (Number(pending ?? 0) > 0) return Infinity;
      return Number(lsn ?? 0);
    } catch {
      return undefined;
    }
  }
}
