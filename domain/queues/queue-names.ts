/** Every BullMQ queue of the system. Workers process them; the API and the outbox relay only add jobs. */
export const QUEUE_NAMES = [
  'housekeeping',
  'stock-history',
  'analytics',
  'low-stock-alerts',
  'webhooks',
  'reports',
  'imports',
  'integrity',
  'replenishment',
] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];
