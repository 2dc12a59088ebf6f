import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { i18n } from 'i18next';
import type { Logger } from 'pino';
import type { Config } from './env.js';
import { openOrm } from './database.js';
import { DatabaseProbe } from './database-probe.js';
import { createI18n } from './i18n.js';
import { createLogger } from './logger.js';
import { createRedis } from './redis.js';
import { postgresConnection, settleSslmode } from './postgres-tls.js';
import { QueueProducer } from '../domain/queues/queue-producer.js';
import { AccountCache } from '../domain/users/account-cache.js';
import { RowStreams } from '../domain/shared/row-stream.js';
import { closeConsumerPool } from '../domain/outbox/consumer-pool.js';

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
}

export async function openServices(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
): Promise<Services> {
  // libpq's default sslmode (prefer) is settled once, for every pool of the process.
  const databaseUrl = await settleSslmode(config.databaseUrl);
  const orm = await openOrm(databaseUrl, config.dbPoolMax, config.databaseCa);
  const redis = createRedis(config, 'producer');
  const queues = new QueueProducer(redis, config.redisPrefix, config.enqueueTimeoutMs);
  const i18n = await createI18n();
  const probe = new DatabaseProbe(orm);
  const database = postgresConnection(databaseUrl, config.databaseCa);
  const accounts = new AccountCache(database, logger);
  const rows = new RowStreams(database);
  return { config, logger, orm, redis, queues, i18n, probe, accounts, rows };
}

export async function closeServices(services: Services): Promise<void> {
  services.probe.stop();
  await services.accounts.close();
  await services.queues.close();
  await services.rows.close();
  await services.redis.quit().catch(() => services.redis.disconnect());
  await closeConsumerPool(services.orm.em);
  await services.orm.close(true);
}
