import type { Processor } from './start-worker.js';
import { evaluateLowStock } from '../domain/alerts/evaluate-low-stock.js';
import { enqueueWebhookDeliveries } from '../domain/queues/stock-event-jobs.js';

/** Evaluates low stock for one outbox event; deliveries it opened are enqueued after the commit. */
export const lowStockAlerts: Processor = async (job, em, services) => {
  const deliveries = await evaluateLowStock(em, String(job.data.eventId), services.config.lowStockWebhookUrl);
  await enqueueWebhookDeliveries(services.queues, deliveries);
  return deliveries.length;
};
