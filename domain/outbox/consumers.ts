import type { JobsOptions } from 'bullmq';
import type { QueueName } from '../queues/queue-names.js';

/**
 * A consumer of outbox events: its own completion marker column (set in the same transaction as its effect),
 * the queue that wakes it up and the job name. The sweeper re-enqueues every event whose marker is null, so a
 * queue is only a wake-up call.
 */
export interface OutboxConsumer {
  name: string;
  marker: 'history_done_at' | 'alerts_done_at' | 'analytics_done_at';
  queue: QueueName;
  jobName: string;
}

export const STOCK_HISTORY_CONSUMER: OutboxConsumer = {
  name: 'stock-history',
  marker: 'history_done_at',
  queue: 'stock-history',
  jobName: 'stock.changed',
};

/** Folds stock events into the analytics rollups (domain/analytics/fold-stock-event.ts). */
export const ANALYTICS_CONSUMER: OutboxConsumer = {
  name: 'analytics',
  marker: 'analytics_done_at',
  queue: 'analytics',
  jobName: 'fold',
};

/** Opens and closes low-stock alerts and their webhook deliveries (domain/alerts/evaluate-low-stock.ts). */
export const ALERTS_CONSUMER: OutboxConsumer = {
  name: 'low-stock-alerts',
  marker: 'alerts_done_at',
  queue: 'low-stock-alerts',
  jobName: 'evaluate',
};

/** Every consumer: the fast path wakes each after commit, the sweeper re-enqueues each one still pending. */
export const OUTBOX_CONSUMERS: OutboxConsumer[] = [
  STOCK_HISTORY_CONSUMER,
  ANALYTICS_CONSUMER,
  ALERTS_CONSUMER,
];

/** One job id per event and queue: BullMQ ignores an add while a job with that id exists. */
export const outboxJobId = (eventId: string | number): string => `outbox-${eventId}`;

/**
 * Completed jobs are kept (bounded) for the dashboard: a job only completes once its marker is set, so a
 * de-duplicated re-add of a completed job loses nothing. Failed jobs are removed at once, so the sweeper can
 * add them again (a retained failed job would block its id).
 */
export const CONSUMER_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 50 },
  removeOnComplete: { count: 1000, age: 3600 },
  removeOnFail: true,
};

export interface OutboxJobData {
  eventId: string;
}
