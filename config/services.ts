import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { i18n } from 'i18next';
import type { Logger } from 'pino';
import type { Config } from './env.js';
import { openOrm } from './database.js';
import { DatabaseProbe } from './database-probe.js';
import { createI18n } from './i18n.js';
import { createProcessLogger } from './logger.js';
import { createRedis } from './redis.js';
import { postgresConnection, settleSslmode } from './postgres-tls.js';
import { QueueProducer } from '../domain/queues/queue-producer.js';
import { AccountCache } from '../domain/users/account-cache.js';
import { CountedRowStreams, RowStreams } from '../domain/shared/row-stream.js';
import { StreamSlots } from '../domain/shared/stream-slots.js';
import { AnswerSpool } from '../domain/shared/answer-spool.js';
import { closeConsumerPool } from '../domain/outbox/consumer-pool.js';
import { ReadReplicas } from './read-replicas.js';

/** The long-lived resources a process holds. Opened once at start, closed in reverse order at shutdown. */
export interface Services {
  config: Config;
  logger: Logger;
  orm: MikroORM;
  /** Fail-fast Redis connection for the request path (sessions, rate limits, enqueue). */
  redis: Redis;
  queues: QueueProducer;
  i18n: i18n;
  probe: DatabaseProbe;
  /** Accounts seen by the request path, dropped on every change (its LISTEN connection opens on first use). */
  accounts: AccountCache;
  /**
   * Cursor-backed long reads (CSV exports, unpaged history) on a pool of their own, each counted against its
   * owner's STREAMS_PER_USER slots.
   */
  rows: CountedRowStreams;
  /** Cursor-backed unpaged lists of items, suppliers and products: not counted, on a second pool. */
  lists: RowStreams;
  /**
   * Where every streamed answer (rows, lists) is written whole before it is sent, so that their connections
   * are never held while a client reads (STREAM_SPOOL_DIR, STREAM_SPOOL_MAX_MB).
   */
  spool: AnswerSpool;
  /** Streaming replicas for analytics and paged history reads (DATABASE_REPLICA_URL); undefined: none. */
  replicas: ReadReplicas | undefined;
}

/** Lists need no slot; a few clients each load several at once (each holds its connection while spooled). */
const LIST_CONNECTIONS = 8;
/** Connections of the counted streams per STREAMS_PER_USER (each held while its answer is spooled). */
const STREAM_CONNECTIONS_PER_SLOT = 3;

export async function openServices(config: Config, logger?: Logger): Promise<Services> {
  logger ??= await createProcessLogger(
    config.logLevel,
    config.nodeEnv === 'development' && process.stdout.isTTY === true,
  );
  // libpq's default sslmode (prefer) is settled once, for every pool of the process.
  const databaseUrl = await settleSslmode(config.databaseUrl);
  const database = postgresConnection(databaseUrl, config.databaseCa);
  const orm = await openOrm(databaseUrl, config.dbPoolMax, {
    lockTimeoutMs: config.lockTimeoutMs,
    caPem: config.databaseCa,
  });
  const redis = createRedis(config, 'producer');
  const queues = new QueueProducer(redis, config.redisPrefix, config.enqueueTimeoutMs);
  const i18n = await createI18n();
  const probe = new DatabaseProbe(orm);
  const accounts = new AccountCache(database, logger);
  const slots = new StreamSlots(redis, config.redisPrefix, config.streamsPerUser, error =>
    logger.warn({ err: error }, 'stream slots: Redis unavailable, counting in this process'),
  );
  const streamPool = new RowStreams(
    database,
    config.streamsPerUser * STREAM_CONNECTIONS_PER_SLOT,
    'stockroom-stream',
  );
  const rows = new CountedRowStreams(streamPool, slots);
  const lists = new RowStreams(database, LIST_CONNECTIONS, 'stockroom-list');
  const spool = await AnswerSpool.open(config.streamSpoolDir, config.streamSpoolMaxBytes);
  const replicas =
    config.databaseReplicaUrls.length === 0
      ? undefined
      : await ReadReplicas.open(orm, config.databaseReplicaUrls, {
          maxLagMs: config.replicaMaxLagMs,
          poolMax: config.dbPoolMax,
          caPem: config.databaseCa,
          logger,
        });
  return { config, logger, orm, redis, queues, i18n, probe, accounts, rows, lists, spool, replicas };
}

export async function closeServices(services: Services): Promise<void> {
  services.probe.stop();
  await services.accounts.close();
  await services.queues.close();
  await services.rows.close();
  await services.lists.close();
  await services.redis.quit().catch(() => services.redis.disconnect());
  await closeConsumerPool(services.orm.em);
  await services.orm.close(true);
}
