import type { QueueProducer } from './queue-producer.js';

/** Webhook deliveries: 6 attempts with exponential backoff (1 s, 2 s, 4 s, ...). */
export const WEBHOOK_JOB_OPTIONS = { attempts: 6, backoff: { type: 'exponential', delay: 1000 } } as const;

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
