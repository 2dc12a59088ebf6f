import type { Job } from 'bullmq';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../config/services.js';
import type { OutboxConsumer } from '../domain/outbox/consumers.js';
import {
  drainConsumer,
  type ConsumerBatch,
  type DrainResult,
  type OneStatementBatch,
} from '../domain/outbox/drain-consumer.js';
import { ringDoorbells } from '../domain/outbox/publish-events.js';

/**
 * A consumer's doorbell job: frees the doorbell (so a ring from now on queues one follow-up job) while it starts
 * draining the consumer (the Redis call no longer delays every run's start under load; the run ends only on
 * a look that started once the doorbell was free, see DrainOptions.freed). When it meets more than one batch of
 * work it rings again, so a peer - another worker process - takes other partitions. Items
 * that could not be applied stay pending and make the job fail visibly once the rest is done.
 */
export async function drainOnDoorbell(
  job: Job,
  em: EntityManager,
  services: Services,
  consumer: OutboxConsumer,
  apply: ConsumerBatch,
  options: { rebuildShared?: boolean; oneStatement?: OneStatementBatch; stopping?: AbortSignal } = {},
): Promise<DrainResult> {
  const freeing = job.removeDeduplicationKey();
  const freed = freeing.then(
    () => undefined,
    () => undefined,
  );
  const log = services.logger.child({ consumer: consumer.name, jobId: job.id });
  const result = await drainConsumer(em, consumer, apply, {
    rebuildShared: options.rebuildShared,
    oneStatement: options.oneStatement,
    stopping: options.stopping,
    freed,
    onBacklog: () => void ringDoorbells(services.queues, [consumer]),
    onBatchError: (error, parts) =>
      log.warn({ err: error, parts }, 'batch failed; applying its partitions one item at a time'),
    onPoison: (error, part, itemId) =>
      log.error({ err: error, part, itemId }, 'events of this item cannot be applied; they stay pending'),
  });
  // A doorbell that could not be freed fails the job (as before, when it was freed first): the sweeper rings.
  await freeing;
  if (result.failed > 0)
    throw new Error(`${consumer.name}: the events of ${result.failed} item(s) could not be applied`);
  return result;
}
