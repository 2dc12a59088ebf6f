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
import { postgresConnection } from './postgres-tls.js';
import { QueueProducer } from '../domain/queues/queue-producer.js';
import { AccountCache } from '../domain/users/account-cache.js';
import { RowStreams } from '../domain/shared/row-stream.js';
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
  /** Cursor-backed reads of any size (unpaged lists, CSV exports) on a small pool of their own. */
  rows: RowStreams;
  /** Streaming replicas for analytics and paged history reads (DATABASE_REPLICA_URL); undefined: none. */
  replicas: ReadReplicas | undefined;
}

export async function openServices(config: Config, logger?: Logger): Promise<Services> {
  logger ??= await createProcessLogger(
    config.logLevel,
    config.nodeEnv === 'development' && process.stdout.isTTY === true,
  );
  const orm = await openOrm(config.databaseUrl, config.dbPoolMax, config.databaseCa);
  const redis = createRedis(config, 'producer');
  const queues = new QueueProducer(redis, config.redisPrefix, config.enqueueTimeoutMs);
  const i18n = await createI18n();
  const probe = new DatabaseProbe(orm);
  const database = postgresConnection(config.databaseUrl, config.databaseCa);
  const accounts = new AccountCache(database, logger);
  const rows = new RowStreams(database);
  const replicas =
    config.databaseReplicaUrls.length === 0
      ? undefined
      : await ReadReplicas.open(orm, config.databaseReplicaUrls, {
          maxLagMs: config.replicaMaxLagMs,
          poolMax: config.dbPoolMax,
          caPem: config.databaseCa,
          logger,
        });
  return { config, logger, orm, redis, queues, i18n, probe, accounts, rows, replicas };
}

export async function closeServices(services: Services): Promise<void> {
  services.probe.stop();
  await services.accounts.close();
  await services.queues.close();
  await services.rows.close();
  await services.replicas?.close();
  await services.redis.quit().catch(() => services.redis.disconnect());
  await closeConsumerPool(services.orm.em);
  await services.orm.close(true);
}
