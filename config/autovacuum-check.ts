import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';

/**
 * Every write churns the outbox's progress rows; without autovacuum their dead rows pile up and the consumers
 * slow down with them. A server-wide `autovacuum = off` cannot be overridden per table, so say so at start.
 */
export async function warnWhenAutovacuumIsOff(orm: MikroORM, log: Logger): Promise<void> {
  try {
    const [row] = await orm.em.getConnection().execute<{ autovacuum: string }[]>('show autovacuum');
    if (row?.autovacuum === 'off')
      log.warn(
        'PostgreSQL runs with autovacuum = off: the outbox tables churn with every write and will slow down; turn it on (docs/operations.md)',
      );
  } catch (error) {
    log.debug({ err: error }, 'autovacuum setting not readable');
  }
}
