import type { QueueProducer } from '../queues/queue-producer.js';
import { doorbellOptions, OUTBOX_CONSUMERS, type OutboxConsumer } from './consumers.js';

/**
 * Rings each consumer's doorbell: one de-duplicated wake-up job per consumer queue, however many events were
 * committed. Best effort and bounded by the enqueue timeout; when Redis is away the request still succeeds and
 * the sweeper rings later.
 */
export async function ringDoorbells(
  queues: QueueProducer,
  consumers: OutboxConsumer[] = OUTBOX_CONSUMERS,
): Promise<void> {
  await Promise.all(
    consumers.map(consumer =>
      queues.addQuietly(consumer.queue, consumer.jobName, {}, doorbellOptions(consumer)),
    ),
  );
}

/** After commit: wakes every consumer when the write committed outbox events (the fast path). */
export async function publishEvents(
  queues: QueueProducer,
  eventIds: string[],
  consumers: OutboxConsumer[] = OUTBOX_CONSUMERS,
): Promise<void> {
  if (eventIds.length > 0) await ringDoorbells(queues, consumers);
}
