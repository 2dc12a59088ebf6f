import type { QueueProducer } from './queue-producer.js';

/** Retries of the stock-event consumers (transient database errors); the sweeper heals anything beyond. */
export const CONSUMER_JOB_OPTIONS = { attempts: 5, backoff: { type: 'exponential', delay: 200 } } as const;

/** Webhook deliveries: 6 attempts with exponential backoff (1 s, 2 s, 4 s, ...). */
export const WEBHOOK_JOB_OPTIONS = { attempts: 6, backoff: { type: 'exponential', delay: 1000 } } as const;

/**
 * Wakes the analytics and low-stock consumers for a committed outbox event (best effort: the sweeper is the
 * correctness path). The write path calls this after commit, next to the stock-history enqueue.
 */
export async function enqueueStockEventConsumers(queues: QueueProducer, eventId: string): Promise<void> {
  await Promise.all([
    queues.addQuietly(
      'analytics',
      'fold',
      { eventId },
      { jobId: `outbox-${eventId}`, ...CONSUMER_JOB_OPTIONS },
    ),
    queues.addQuietly(
      'low-stock-alerts',
      'evaluate',
      { eventId },
      { jobId: `outbox-${eventId}`, ...CONSUMER_JOB_OPTIONS },
    ),
  ]);
}

export async function enqueueWebhookDeliveries(
  queues: QueueProducer,
  deliveryIds: string[],
  suffix = '',
): Promise<void> {
  for (const id of deliveryIds)
    await queues.addQuietly(
      'webhooks',
      'deliver',
      { deliveryId: id },
      { jobId: `webhook-${id}${suffix}`, ...WEBHOOK_JOB_OPTIONS },
    );
}
