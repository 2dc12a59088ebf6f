import type { QueueProducer } from '../queues/queue-producer.js';
import { doorbellOptions, OUTBOX_CONSUMERS, type OutboxConsumer } from './consumers.js';

/**
 * How close together the API's writes ring one consumer's doorbell. A ring wakes a run that goes on looking
 * for RUN_LINGER_MS (far longer) after its last find, so an event committed this soon after a ring is taken by
 * that run; the trailing ring (below) only covers the rare run that ended early or went to another process.
 */
export const DOORBELL_SPACING_MS = 10;

interface Doorbell {
  /** The ring on its way to Redis. */
  inFlight?: Promise<boolean>;
  /** The one ring that follows it, shared by every caller that committed while it was on its way. */
  next?: Promise<boolean>;
}

const doorbells = new WeakMap<QueueProducer, Map<string, Doorbell>>();

function doorbellOf(queues: QueueProducer, consumer: OutboxConsumer): Doorbell {
  let bells = doorbells.get(queues);
  if (!bells) doorbells.set(queues, (bells = new Map()));
  let bell = bells.get(consumer.queue);
  if (!bell) bells.set(consumer.queue, (bell = {}));
  return bell;
}

/**
 * One ring of a consumer's doorbell. Each caller has committed its events before it asks. With no ring on its
 * way, the ring goes at once (a quiet system wakes its consumers without delay). While one is on its way its
 * job may already be running past the caller's events, so the caller gets the NEXT ring, sent as soon as the
 * current one is acknowledged and shared by everyone who asked meanwhile.
 *
 * A ring that finds the doorbell's de-duplication id held adds nothing (under load, nearly every ring): the
 * holder is a job that has not freed the id yet, and a job frees it when it starts and ends its run only on
 * a look that began after the freeing (drain-on-doorbell.ts), so after this caller's commit. The add would
 * have been swallowed by the same id anyway.
 */
function ring(queues: QueueProducer, consumer: OutboxConsumer): Promise<boolean> {
  const state = doorbellOf(queues, consumer);
  if (state.inFlight === undefined) {
    const sent = queues.addUnlessHeld(consumer.queue, consumer.jobName, {}, doorbellOptions(consumer));
    state.inFlight = sent.finally(() => (state.inFlight = undefined));
    return state.inFlight;
  }
  // When the current ring failed (Redis away or slow past the enqueue timeout) the next is not sent: the
  // sweeper rings once Redis is back, and no caller waits for a second timeout.
  state.next ??= state.inFlight.then(sent => {
    state.next = undefined;
    return sent ? ring(queues, consumer) : false;
  });
  return state.next;
}

interface WriteRings {
  /** When the writes' latest ring was sent (performance.now()). */
  sentAt: number;
  /** The one ring due DOORBELL_SPACING_MS after the latest, for the writes that committed in between. */
  trailing?: NodeJS.Timeout;
}

const writeRings = new WeakMap<QueueProducer, Map<string, WriteRings>>();

/**
 * The writes' ring of every consumer: at once when the doorbells have not rung for DOORBELL_SPACING_MS (the
 * caller waits for it, so a quiet system wakes its consumers before the response), else one trailing ring of
 * them all that many ms after the latest, shared by every write that committed in between, which does not wait
 * for it. Under load the API therefore sends one Redis call per consumer every few ms instead of one per write
 * (each was a Lua call on Redis and ~1/6 of a write's CPU in the web process).
 */
function ringAfterWrite(queues: QueueProducer, consumers: OutboxConsumer[]): Promise<void> | undefined {
  let byConsumers = writeRings.get(queues);
  if (!byConsumers) writeRings.set(queues, (byConsumers = new Map()));
  const key = consumers.map(consumer => consumer.name).join();
  let state = byConsumers.get(key);
  if (!state) byConsumers.set(key, (state = { sentAt: -Infinity }));
  if (state.trailing) return undefined;
  const now = performance.now();
  const since = now - state.sentAt;
  if (since >= DOORBELL_SPACING_MS) {
    state.sentAt = now;
    return ringDoorbells(queues, consumers);
  }
  const rings = state;
  rings.trailing = setTimeout(() => {
    rings.trailing = undefined;
    rings.sentAt = performance.now();
    void ringDoorbells(queues, consumers);
  }, DOORBELL_SPACING_MS - since);
  // A process on its way out leaves it to the sweeper.
  rings.trailing.unref();
  return undefined;
}

/**
 * Rings each consumer's doorbell at once: one de-duplicated wake-up job per consumer queue, however many events
 * were committed. Best effort and bounded by the enqueue timeout; when Redis is away the request still
 * succeeds and the sweeper rings later.
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
  if (eventIds.length > 0) await ringAfterWrite(queues, consumers);
}
