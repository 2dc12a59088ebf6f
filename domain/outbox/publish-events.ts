import type { QueueProducer } from '../queues/queue-producer.js';
import { doorbellOptions, OUTBOX_CONSUMERS, type OutboxConsumer } from './consumers.js';

/** Rings not yet sent, per producer and consumer queue: callers in the same event-loop turn share one. */
const scheduled = new WeakMap<QueueProducer, Map<string, Promise<boolean>>>();

/**
 * One ring of a consumer's doorbell, shared by every caller of this event-loop turn. Each caller has committed
 * its events before it asks, and the shared add is sent after all of them asked (setImmediate), so the one
 * wake-up covers every one of their events; under load this turns one Redis call per write and consumer into
 * one per loop turn and consumer.
 */
function ring(queues: QueueProducer, consumer: OutboxConsumer): Promise<boolean> {
  let rings = scheduled.get(queues);
  if (!rings) scheduled.set(queues, (rings = new Map()));
  let pending = rings.get(consumer.queue);
  if (!pending) {
    pending = new Promise<boolean>(resolve =>
      setImmediate(() => {
        rings.delete(consumer.queue);
        resolve(queues.addQuietly(consumer.queue, consumer.jobName, {}, doorbellOptions(consumer)));
      }),
    );
    rings.set(consumer.queue, pending);
  }
  return pending;
}

/**
 * Rings each consumer's doorbell: one de-duplicated wake-up job per consumer queue, however many events were
 * committed. Best effort and bounded by the enqueue timeout; when Redis is away the request still succeeds and
 * the sweeper rings later.
 */
export async function ringDoorbells(
  queues: QueueProducer,
  consumers: OutboxConsumer[] = OUTBOX_CONSUMERS,
): Promise<void> {
  await Promise.all(consumers.map(consumer => ring(queues, consumer)));
}

/** After commit: wakes every consumer when the write committed outbox events (the fast path). */
export async function publishEvents(
  queues: QueueProducer,
  eventIds: string[],
  consumers: OutboxConsumer[] = OUTBOX_CONSUMERS,
): Promise<void> {
  if (eventIds.length > 0) await ringDoorbells(queues, consumers);
}
