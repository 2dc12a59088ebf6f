import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { openOrm } from './database.js';
import { nativePool, preparedQuery } from '../domain/shared/native-transaction.js';
import { withTimeout } from '../domain/shared/with-timeout.js';

/** A WAL position (`16/B374D848`) as a number: exact below 2^53 bytes of WAL. */
export const lsnNumber = (lsn: string): number => {
  const [high, low] = lsn.split('/');
  return parseInt(high, 16) * 2 ** 32 + parseInt(low, 16);
};

/** The primary's WAL insert position: every commit acknowledged before this statement was sent lies below it. */
const PRIMARY_POSITION_SQL = 'select pg_current_wal_insert_lsn()::text as lsn';
const REPLICA_POSITION_SQL =
  'select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as lsn';

interface PrimarySample {
  /** When the statement was sent (performance.now()). */
  sentAt: number;
  lsn: number;
}

/** Why a replica gets no reads at the moment (undefined: it may take reads). */
type Standing = 'starting' | 'down' | 'lagging' | 'not-a-replica' | undefined;

/** One streaming replica: its own ORM and pool, and what the last poll saw of it. */
export class Replica {
  /** Replayed WAL position at the last successful poll (only grows while it stays a replica). */
  replayLsn = -1;
  /** The primary's send time of the newest sample this replica had replayed: its lag is `now - caughtUpAt`. */
  caughtUpAt = -Infinity;
  polledAt = -Infinity;
  pollOk = false;
  recovering = false;
  /** A request failed on it since the last successful poll: no reads until the next one succeeds. */
  failed = false;
  standing: Standing = 'starting';

  constructor(
    readonly index: number,
    readonly orm: MikroORM,
  ) {}

  lagMs(now = performance.now()): number {
    return now - this.caughtUpAt;
  }

  /** A unit of work on this replica (reads only: nothing here may write). */
  fork(): EntityManager {
    return this.orm.em.fork();
  }
}

/**
 * The streaming replicas of DATABASE_REPLICA_URL (TLS settings as the primary's: each URL's sslmode, settled by
 * openOrm as the primary's, and DATABASE_CA_FILE) and how far each is behind. Lag is measured by WAL position,
 * never by replay timestamp (which grows without bound on an idle primary): every poll samples the primary's
 * insert position and each replica's replay position; a replica's lag is the age of the newest primary sample
 * it has replayed, so a replica that has everything of a moment ago is that far behind, whether or not anything
 * was written since. A replica gets reads only while its last poll succeeded, is recent, and its lag is below
 * REPLICA_MAX_LAG_MS. Nothing connects at start (the pools open lazily and polling starts on the first read),
 * so a replica that is down never stops start-up; it comes back into use at the first good poll.
 */
export class ReadReplicas {
  private readonly samples: PrimarySample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private next = 0;
  private readonly pollMs: number;
  private readonly keepSamples: number;

  private constructor(
    private readonly primary: MikroORM,
    readonly replicas: readonly Replica[],
    readonly maxLagMs: number,
    private readonly logger: Logger,
  ) {
    this.pollMs = Math.max(10, Math.min(100, Math.floor(maxLagMs / 4)));
    this.keepSamples = Math.ceil((2 * maxLagMs) / this.pollMs) + 2;
  }

  static async open(
    primary: MikroORM,
    urls: readonly string[],
    options: { maxLagMs: number; poolMax: number; caPem: string | undefined; logger: Logger },
  ): Promise<ReadReplicas> {
    const orms = await Promise.all(urls.map(url => openOrm(url, options.poolMax, { caPem: options.caPem })));
    return new ReadReplicas(
      primary,
      orms.map((orm, index) => new Replica(index, orm)),
      options.maxLagMs,
      options.logger,
    );
  }

  /**
   * A replica that may serve a read now and has replayed at least `minLsn` (the caller's own last write),
   * round robin among those; undefined: read on the primary. The first call starts the polling.
   */
  pick(minLsn = 0): Replica | undefined {
    if (this.timer === undefined) this.start();
    const now = performance.now();
    const count = this.replicas.length;
    for (let i = 0; i < count; i += 1) {
      const replica = this.replicas[(this.next + i) % count];
      if (replica.standing === undefined && !replica.failed && replica.replayLsn >= minLsn) {
        if (replica.lagMs(now) >= this.maxLagMs || now - replica.polledAt >= this.maxLagMs) continue;
        this.next = (replica.index + 1) % count;
        return replica;
      }
    }
    return undefined;
  }

  /** A read failed on `replica` (down, restarting, conflict with recovery): no reads until a poll succeeds. */
  failed(replica: Replica, error: unknown): void {
    if (!replica.failed)
      this.logger.warn(
        { replica: replica.index, err: error },
        'read replica failed a read; reading on the primary',
      );
    replica.failed = true;
  }

  /** The primary's WAL insert position now (above every commit acknowledged so far). */
  async primaryLsn(): Promise<number> {
    const [row] = await preparedQuery<{ lsn: string }>(
      await nativePool(this.primary.em),
      PRIMARY_POSITION_SQL,
    );
    return lsnNumber(row.lsn);
  }

  private start(): void {
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    void this.poll();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const bound = (work: Promise<void>) =>
        withTimeout(work, this.maxLagMs, () => new Error('poll timed out')).catch(() => undefined);
      await Promise.all([
        bound(this.samplePrimary()),
        ...this.replicas.map(r => bound(this.sampleReplica(r))),
      ]);
      for (const replica of this.replicas) this.judge(replica);
    } finally {
      this.polling = false;
    }
  }

  private async samplePrimary(): Promise<void> {
    const sentAt = performance.now();
    const lsn = await this.primaryLsn();
    this.samples.push({ sentAt, lsn });
    if (this.samples.length > this.keepSamples) this.samples.shift();
  }

  private async sampleReplica(replica: Replica): Promise<void> {
    replica.pollOk = false;
    const pool = await nativePool(replica.orm.em);
    const [row] = await preparedQuery<{ recovering: boolean; lsn: string | null }>(
      pool,
      REPLICA_POSITION_SQL,
    );
    replica.recovering = row.recovering;
    replica.replayLsn = row.lsn === null ? -1 : lsnNumber(row.lsn);
    replica.polledAt = performance.now();
    replica.pollOk = true;
    replica.failed = false;
  }

  private judge(replica: Replica): void {
    replica.caughtUpAt = -Infinity;
    for (let i = this.samples.length - 1; i >= 0; i -= 1) {
      if (this.samples[i].lsn <= replica.replayLsn) {
        replica.caughtUpAt = this.samples[i].sentAt;
        break;
      }
    }
    const standing: Standing = !replica.pollOk
      ? 'down'
      : !replica.recovering
        ? 'not-a-replica'
        : replica.lagMs() >= this.maxLagMs
          ? 'lagging'
          : undefined;
    if (standing !== replica.standing) {
      if (standing === undefined) this.logger.info({ replica: replica.index }, 'read replica takes reads');
      else this.logger.warn({ replica: replica.index, standing }, 'read replica takes no reads');
      replica.standing = standing;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map(r => r.orm.close(true).catch(() => undefined)));
  }
}
