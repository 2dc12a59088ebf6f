import type { Processor } from './start-worker.js';
import { deliverWebhook, stalePendingDeliveries } from '../domain/alerts/deliver-webhook.js';
import { enqueueWebhookDeliveries } from '../domain/queues/stock-event-jobs.js';

/** `deliver` one webhook (retried with exponential backoff by BullMQ) or `sweep` stale pending ones (hourly). */
export const webhooks: Processor = async (job, em, services) => {
  if (job.name === 'sweep') {
    const olderThanMs = typeof job.data?.olderThanMs === 'number' ? job.data.olderThanMs : 10 * 60 * 1000;
    const ids = await stalePendingDeliveries(em, olderThanMs);
    await enqueueWebhookDeliveries(services.queues, ids, `-s${job.id ?? Date.now()}`);
    return ids.length;
  }
  const attempts = job.opts.attempts ?? 1;
  return deliverWebhook(em, String(job.data.deliveryId), {
    secret: services.config.webhookSecret,
    lastAttempt: job.attemptsMade + 1 >= attempts,
  });
};
