import type { Processor } from './start-worker.js';
import { drainOnDoorbell } from './drain-on-doorbell.js';
import { ALERTS_CONSUMER } from '../domain/outbox/consumers.js';
import { evaluateLowStock } from '../domain/alerts/evaluate-low-stock.js';
import { enqueueWebhookDeliveries } from '../domain/queues/stock-event-jobs.js';

/** Doorbell -> low-stock alerts of every pending event; the webhook deliveries it opened are enqueued after commit. */
export const lowStockAlerts: Processor = async (job, em, services, stopping) => {
  const deliveries: string[] = [];
  try {
    return await drainOnDoorbell(
      job,
      em,
      services,
      ALERTS_CONSUMER,
      evaluateLowStock(services.config.lowStockWebhookUrl, deliveries),
      { rebuildShared: true, stopping },
    );
  } finally {
    // A rolled-back batch's delivery ids name no row (sequence values are never reused): their jobs are skipped.
    await enqueueWebhookDeliveries(services.queues, deliveries);
  }
};
