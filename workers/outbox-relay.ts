import type { Services } from '../config/services.js';
import { OUTBOX_CONSUMERS, type OutboxConsumer } from '../domain/outbox/consumers.js';
import { sweepOutbox } from '../domain/outbox/sweep-outbox.js';

export interface RunningRelay {
  stop(): Promise<void>;
}

/**
 * The outbox sweeper: every OUTBOX_SWEEP_INTERVAL_MS each worker process rings the doorbell of every consumer
 * that has events still pending. It keeps no state in Redis (an emptied Redis cannot lose it) and only rings;
 * any number of processes can run it (the doorbell is de-duplicated). Never overlaps itself.
 */
export function startOutboxRelay(
  services: Services,
  consumers: OutboxConsumer[] = OUTBOX_CONSUMERS,
): RunningRelay {
  const log = services.logger.child({ component: 'outbox-relay' });
  const interval = services.config.outboxSweepIntervalMs;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const sweep = async () => {
    for (const consumer of consumers) {
      try {
        const rang = await sweepOutbox(services.orm.em.fork(), services.queues, consumer, {
          graceMs: Math.min(interval, 500),
        });
        if (rang) log.debug({ consumer: consumer.name }, 'pending outbox events: doorbell rung');
      } catch (error) {
        log.warn({ err: error, consumer: consumer.name }, 'outbox sweep failed; next tick retries');
      }
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep().finally(schedule);
    }, interval);
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
