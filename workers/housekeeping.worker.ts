import type { Processor } from './start-worker.js';
import { QUEUE_NAMES } from '../domain/queues/queue-names.js';
import { purgeIdempotencyKeys } from '../domain/idempotency/with-idempotency-key.js';
import { purgeImports } from '../domain/imports/purge-imports.js';
import { purgeOutbox } from '../domain/outbox/purge-outbox.js';
import { purgeItemChanges } from '../domain/inventory/purge-item-changes.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Daily cleanup: completed and failed jobs older than a day (retention is bounded anyway), expired idempotency
 * keys, finished CSV imports older than a week, outbox events every consumer finished more than a week ago,
 * item-change records past their retention that no point-in-time read needs.
 */
export const housekeeping: Processor = async (job, em, services) => {
  const idempotencyKeys = await purgeIdempotencyKeys(em);
  const imports = await purgeImports(em);
  const outboxEvents = await purgeOutbox(em);
  const itemChanges = await purgeItemChanges(em);
  const removed: Record<string, number> = {};
  for (const name of QUEUE_NAMES) {
    const queue = services.queues.queue(name);
    const completed = await queue.clean(DAY_MS, 10_000, 'completed');
    const failed = await queue.clean(7 * DAY_MS, 10_000, 'failed');
    removed[name] = completed.length + failed.length;
  }
  services.logger.info(
    { jobId: job.id, removed, idempotencyKeys, imports, outboxEvents, itemChanges },
    'housekeeping done',
  );
  return removed;
};
