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
import { connectionSplit, type ConnectionSplit, type ProcessRoles } from './connection-budget.js';
import { sizeConsumerPool } from '../domain/outbox/consumer-pool.js';

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
  /** The PostgreSQL connections each pool may hold (DB_CONNECTIONS_MAX, DB_POOL_MAX). */
  connections: ConnectionSplit;
}

/**
 * Opens what a process of `roles` needs (default: the web role, and the workers when RUN_WORKERS). Its pools
 * are sized by connectionSplit, which refuses (ConfigError) a split above DB_CONNECTIONS_MAX; the split is
 * logged once.
 */
export async function openServices(
  config: Config,
  logger?: Logger,
  roles: ProcessRoles = { web: true, worker: config.runWorkers },
): Promise<Services> {
  const connections = connectionSplit(config, roles);
  logger ??= await createProcessLogger(
    config.logLevel,
    config.nodeEnv === 'development' && process.stdout.isTTY === true,
  );
  logger.info(
    {
      connections,
      connectionsMax: config.dbConnectionsMax ?? null,
      replicaConnections: config.databaseReplicaUrls.length === 0 ? 0 : connections.orm,
    },
    'PostgreSQL connections this process may hold',
  );
  // libpq's default sslmode (prefer) is settled once, for every pool of the process.
  const databaseUrl = await settleSslmode(config.databaseUrl);
  const database = postgresConnection(databaseUrl, config.databaseCa);
  const orm = await openOrm(databaseUrl, connections.orm, {
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
  // A process without the web role opens no stream pools (pg pools connect on first use; one connection each
  // keeps a script that streams working).
  const streamPool = new RowStreams(database, Math.max(1, connections.streams), 'stockroom-stream');
  const rows = new CountedRowStreams(streamPool, slots);
  const lists = new RowStreams(database, Math.max(1, connections.lists), 'stockroom-list');
  // Without the worker role the consumers' pool keeps its own size (tests and scripts run jobs in process).
  if (connections.consumers > 0) sizeConsumerPool(orm.em, connections.consumers);
  const spool = await AnswerSpool.open(config.streamSpoolDir, config.streamSpoolMaxBytes);
  const replicas =
    config.databaseReplicaUrls.length === 0
      ? undefined
      : await ReadReplicas.open(orm, config.databaseReplicaUrls, {
          maxLagMs: config.replicaMaxLagMs,
          // Each replica's pool takes the ORM pool's size, on the replica's own connection limit.
          poolMax: connections.orm,
          caPem: config.databaseCa,
          logger,
        });
  return {
    config,
    logger,
    orm,
    redis,
    queues,
    i18n,
    probe,
    accounts,
    rows,
    lists,
    spool,
    replicas,
    connections,
  };
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
