import type { QueueProducer } from '../queues/queue-producer.js';
import { CONSUMER_JOB_OPTIONS, OUTBOX_CONSUMERS, outboxJobId, type OutboxConsumer } from './consumers.js';

/**
 * After commit: wake every consumer of the events (fast path). Best effort and bounded by the enqueue
 * timeout; when Redis is away the request still succeeds and the sweeper enqueues the events later.
 */
export async function publishEvents(
  queues: QueueProducer,
  eventIds: string[],
  consumers: OutboxConsumer[] = OUTBOX_CONSUMERS,
): Promise<void> {
  if (eventIds.length === 0) return;
  await Promise.all(
    consumers.map(consumer =>
      eventIds.length === 1
        ? queues.addQuietly(
            consumer.queue,
            consumer.jobName,
            { eventId: eventIds[0] },
            { ...CONSUMER_JOB_OPTIONS, jobId: outboxJobId(eventIds[0]) },
          )
        : queues
            .addBulk(
              consumer.queue,
              eventIds.map(eventId => ({
                name: consumer.jobName,
                data: { eventId },
                opts: { ...CONSUMER_JOB_OPTIONS, jobId: outboxJobId(eventId) },
              })),
            )
            .catch(() => undefined),
    ),
  );
}
