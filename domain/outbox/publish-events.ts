import type { DeduplicatedJob, QueueProducer } from '../queues/queue-producer.js';
import { doorbellOptions, OUTBOX_CONSUMERS, type OutboxConsumer } from './consumers.js';

/**
 * How close together the API's writes ring one consumer's doorbell. A ring wakes a run that goes on looking
 * for RUN_LINGER_MS (far longer) after its last find, so an event committed this soon after a ring is taken by
 * that run; the trailing ring (below) only covers the rare run that ended early or went to another process.
 */
export const DOORBELL_SPACING_MS = 10;

/** The doorbells of one set of consumers, rung together (one Redis round trip for them all). */
interface Doorbells {
  /** Their wake-up jobs, each de-duplicated by its consumer's doorbell id. */
  jobs: DeduplicatedJob[];
  /** The ring on its way to Redis. */
  inFlight?: Promise<boolean>;
  /** The one ring that follows it, shared by every caller that committed while it was on its way. */
  next?: Promise<boolean>;
  /** When the writes' latest ring was sent (performance.now()). */
  sentAt: number;
  /** The one ring due DOORBELL_SPACING_MS after the latest, for the writes that committed in between. */
  trailing?: NodeJS.Timeout;
}

const doorbells = new WeakMap<QueueProducer, Map<string, Doorbells>>();
/** The name of a set of consumers, worked out once per array (the API passes the same array every time). */
const setNames = new WeakMap<readonly OutboxConsumer[], string>();

function doorbellsOf(queues: QueueProducer, consumers: readonly OutboxConsumer[]): Doorbells {
  let sets = doorbells.get(queues);
  if (!sets) doorbells.set(queues, (sets = new Map()));
  let name = setNames.get(consumers);
  if (name === undefined) setNames.set(consumers, (name = consumers.map(consumer => consumer.name).join()));
  let bells = sets.get(name);
  if (!bells) {
    const jobs = consumers.map(consumer => ({
      queue: consumer.queue,
      name: consumer.jobName,
      data: {},
      options: doorbellOptions(consumer),
    }));
    sets.set(name, (bells = { jobs, sentAt: -Infinity }));
  }
  return bells;
}

/**
 * One ring of a set of consumers' doorbells. Each caller has committed its events before it asks. With no ring
 * on its way, the ring goes at once (a quiet system wakes its consumers without delay). While one is on its
 * way its jobs may already be running past the caller's events, so the caller gets the NEXT ring, sent as soon
 * as the current one is acknowledged and shared by everyone who asked meanwhile.
 *
 * A doorbell whose de-duplication id is held gets nothing added (under load, nearly every one): the holder is
 * a job that has not freed the id yet, and a job frees it when it starts and ends its run only on a look that
 * began after the freeing (drain-on-doorbell.ts), so after this caller's commit. The add would have been
 * swallowed by the same id anyway.
 */
function ring(queues: QueueProducer, bells: Doorbells): Promise<boolean> {
  if (bells.inFlight === undefined) {
    const sent = queues.addEachUnlessHeld(bells.jobs);
    bells.inFlight = sent.finally(() => (bells.inFlight = undefined));
    return bells.inFlight;
  }
  // When the current ring failed (Redis away or slow past the enqueue timeout) the next is not sent: the
  // sweeper rings once Redis is back, and no caller waits for a second timeout.
  bells.next ??= bells.inFlight.then(sent => {
    bells.next = undefined;
    return sent ? ring(queues, bells) : false;
  });
  return bells.next;
}

/**
 * The writes' ring of every consumer: at once when the doorbells have not rung for DOORBELL_SPACING_MS (the
 * caller waits for it, so a quiet system wakes its consumers before the response), else one trailing ring of
 * them all that many ms after the latest, shared by every write that committed in between, which does not wait
 * for it. Under load the API therefore sends one Redis call every few ms instead of one per write and consumer
 * (each was a Lua call on Redis and ~1/6 of a write's CPU in the web process).
 */
function ringAfterWrite(
  queues: QueueProducer,
  consumers: readonly OutboxConsumer[],
): Promise<boolean> | undefined {
  const bells = doorbellsOf(queues, consumers);
  if (bells.trailing) return undefined;
  const now = performance.now();
  const since = now - bells.sentAt;
  if (since >= DOORBELL_SPACING_MS) {
    bells.sentAt = now;
    return ring(queues, bells);
  }
  bells.trailing = setTimeout(() => {
    bells.trailing = undefined;
    bells.sentAt = performance.now();
    void ring(queues, bells);
  }, DOORBELL_SPACING_MS - since);
  // A process on its way out leaves it to the sweeper.
  bells.trailing.unref();
  return undefined;
}

/**
 * Rings the consumers' doorbells at once: one de-duplicated wake-up job per consumer queue, however many events
 * were committed. Best effort and bounded by the enqueue timeout; when Redis is away the request still
 * succeeds and the sweeper rings later.
 */
export async function ringDoorbells(
  queues: QueueProducer,
  consumers: readonly OutboxConsumer[] = OUTBOX_CONSUMERS,
): Promise<void> {
  await ring(queues, doorbellsOf(queues, consumers));
}

/**
 * After commit: wakes every consumer when the write committed outbox events (the fast path). The ring to wait
 * for, or nothing to wait for (no events, or the trailing ring of a busy API).
 */
export function publishEvents(
  queues: QueueProducer,
  eventIds: string[],
  consumers: readonly OutboxConsumer[] = OUTBOX_CONSUMERS,
): Promise<boolean> | undefined {
  return eventIds.length > 0 ? ringAfterWrite(queues, consumers) : undefined;
}
