import type { DeduplicationOptions, JobsOptions } from 'bullmq';
import type { QueueName } from '../queues/queue-names.js';

/**
 * A consumer of outbox events: its own progress rows (`outbox_pending` rows with its code, written with each
 * event; their `done_at` - the consumer's marker - is set in the same statement as its effect), the queue whose
 * doorbell wakes it and the job name. Redis only ever carries wake-up calls: the pending work is what the
 * markers say, so a lost job loses nothing (the sweeper rings again).
 */
export interface OutboxConsumer {
  name: 'stock-history' | 'analytics' | 'low-stock-alerts';
  /** `outbox_pending.consumer` of its rows (migration OutboxPending). */
  code: 1 | 2 | 3;
  queue: QueueName;
  jobName: string;
  /** Advisory-lock namespace of its partitions (one process at a time applies a partition). */
  lockNamespace: number;
  /**
   * Where its runs start looking for pending partitions. The consumers start a third of the partitions apart,
   * so while they drain the same backlog they mostly read different outbox rows and write rollup rows of
   * different slots at any moment.
   */
  firstPartition: number;
  /**
   * Its transactions commit without waiting for the WAL flush (`synchronous_commit = off` for them alone): for a
   * consumer whose effects stay inside PostgreSQL. A PostgreSQL crash can then lose its last few hundred ms of
   * commits, but effect and marker are lost together (one transaction), so those events are simply pending
   * again and applied once more. Not for the alerts, whose webhooks leave the database after commit.
   */
  asyncCommit: boolean;
}

/** A select-list expression: the current transaction commits without waiting for the WAL flush (asyncCommit). */
export const ASYNC_COMMIT_SQL = "set_config('synchronous_commit', 'off', true)";

/** Lifts LOCK_TIMEOUT_MS (the ORM's connections) for the rest of a transaction that must wait for its locks. */
export const NO_LOCK_TIMEOUT_SQL = "set_config('lock_timeout', '0', true)";

export const STOCK_HISTORY_CONSUMER: OutboxConsumer = {
  name: 'stock-history',
  code: 1,
  queue: 'stock-history',
  jobName: 'stock.changed',
  lockNamespace: 740010,
  firstPartition: 0,
  asyncCommit: true,
};

/** Folds stock events into the analytics rollups (domain/analytics/fold-pending-events.ts). */
export const ANALYTICS_CONSUMER: OutboxConsumer = {
  name: 'analytics',
  code: 3,
  queue: 'analytics',
  jobName: 'fold',
  lockNamespace: 740011,
  firstPartition: 5,
  asyncCommit: true,
};

/** Opens and closes low-stock alerts and their webhook deliveries (domain/alerts/evaluate-low-stock.ts). */
export const ALERTS_CONSUMER: OutboxConsumer = {
  name: 'low-stock-alerts',
  code: 2,
  queue: 'low-stock-alerts',
  jobName: 'evaluate',
  lockNamespace: 740012,
  firstPartition: 11,
  asyncCommit: false,
};

/** Every consumer: the API rings each one's doorbell after commit, the sweeper each one still pending. */
export const OUTBOX_CONSUMERS: OutboxConsumer[] = [
  STOCK_HISTORY_CONSUMER,
  ANALYTICS_CONSUMER,
  ALERTS_CONSUMER,
];

/**
 * The statement part that writes an event's progress rows, one per consumer (pending), for the new outbox rows
 * of `events` (a CTE with their `id` and `part`): part of the statement that inserts them, so an event and its
 * pending rows commit together.
 */
export const pendingRowsInsert = (events: string): string =>
  `insert into outbox_pending (consumer, part, id)
   select c.code, ${events}.part, ${events}.id
     from ${events} cross join (values ${OUTBOX_CONSUMERS.map(c => `(${c.code}::smallint)`).join(', ')}) c(code)`;

const DOORBELL_DEDUPLICATION_MS = 1000;

/**
 * The doorbell: ONE wake-up job per consumer queue, de-duplicated by BullMQ while it waits. The job removes
 * its de-duplication key when it starts, so a ring during a run queues exactly one follow-up job: an event
 * committed after the run's last look is never left waiting for the sweeper. Failed jobs are dropped (the
 * sweeper rings again while anything is pending); a few completed ones are kept for the dashboard.
 * The key also expires after DOORBELL_DEDUPLICATION_MS: after a Redis failover the promoted replica may hold a
 * job as started without the removal of its key (lost with the old master), and that key would otherwise
 * swallow every ring until stall detection (30 s and more). A job waits far less than that before it starts.
 */
export const doorbellOptions = (
  consumer: OutboxConsumer,
): JobsOptions & { deduplication: DeduplicationOptions } => ({
  deduplication: { id: `doorbell-${consumer.name}`, ttl: DOORBELL_DEDUPLICATION_MS },
  attempts: 3,
  backoff: { type: 'exponential', delay: 100 },
  removeOnComplete: { count: 100 },
  removeOnFail: { count: 100 },
});
