import { expect } from 'chai';
import { testApp } from '../setup/hooks.js';
import { createRedis } from '../../config/redis.js';
import { QueueProducer } from '../../domain/queues/queue-producer.js';
import { ANALYTICS_CONSUMER, STOCK_HISTORY_CONSUMER } from '../../domain/outbox/consumers.js';
import { DOORBELL_SPACING_MS, publishEvents, ringDoorbells } from '../../domain/outbox/publish-events.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The API's doorbell rings through a real BullMQ queue on the test Redis (a prefix of its own, no worker): each
 * completed add is counted by the queue's own `waiting` event.
 */
describe('Doorbell spacing of the API writes', () => {
  it('When writes commit within the spacing after a ring, then they share ONE trailing ring and do not wait for it; a write after a quiet spell rings at once', async () => {
    const redis = createRedis(testApp().services.config, 'producer');
    const producer = new QueueProducer(redis, `spacing-${process.pid}-${Date.now()}`, 2000);
    const consumers = [STOCK_HISTORY_CONSUMER];
    let rings = 0;
    // Each ring's job frees the doorbell at once, as a worker's run does when it starts: else the following
    // rings would find it held and (rightly) add nothing.
    producer.queue(STOCK_HISTORY_CONSUMER.queue).on('waiting', job => {
      rings++;
      void job.removeDeduplicationKey();
    });
    const quiet = () => new Promise(resolve => setTimeout(resolve, DOORBELL_SPACING_MS * 3));
    try {
      // A machine under load may take longer than the spacing for the first ring's round trip: then the
      // following writes ring at once, and the attempt is repeated.
      let exercised = false;
      for (let attempt = 0; attempt < 20 && !exercised; attempt++) {
        await quiet();
        const before = rings;
        const sentAt = performance.now();
        await publishEvents(producer, ['1'], consumers);
        expect(rings, 'a write after a quiet spell rings before it returns').to.equal(before + 1);
        await publishEvents(producer, ['2'], consumers);
        await publishEvents(producer, ['3'], consumers);
        if (performance.now() - sentAt >= DOORBELL_SPACING_MS) {
          await waitFor(() => rings >= before + 2, 2000, 'the rings of a slow attempt');
          continue;
        }
        exercised = true;
        expect(rings, 'the writes within the spacing do not wait for a ring').to.equal(before + 1);
        await waitFor(() => rings === before + 2, 2000, 'the trailing ring');
        await quiet();
        expect(rings, 'one trailing ring for both writes').to.equal(before + 2);
      }
      expect(exercised, 'two writes within the spacing of a ring').to.equal(true);
      // Writes without events ring nothing.
      await quiet();
      const before = rings;
      await publishEvents(producer, [], consumers);
      await quiet();
      expect(rings).to.equal(before);
    } finally {
      await producer.queue(STOCK_HISTORY_CONSUMER.queue).obliterate({ force: true });
      await producer.close();
      redis.disconnect();
    }
  });
  it('When a doorbell job holds its de-duplication id, then rings add nothing; once its run frees the id, the next ring adds one job', async () => {
    const redis = createRedis(testApp().services.config, 'producer');
    const producer = new QueueProducer(redis, `held-${process.pid}-${Date.now()}`, 2000);
    const consumers = [STOCK_HISTORY_CONSUMER];
    const queue = producer.queue(STOCK_HISTORY_CONSUMER.queue);
    let adds = 0;
    queue.on('waiting', () => adds++);
    try {
      await ringDoorbells(producer, consumers);
      expect(adds, 'the first ring adds the job').to.equal(1);
      for (let ring = 0; ring < 5; ring++) await ringDoorbells(producer, consumers);
      expect(adds, 'rings while the job holds the id').to.equal(1);
      const waiting = await queue.getWaiting();
      expect(waiting).to.have.length(1);
      // What a worker's run does when it starts.
      expect(await waiting[0].removeDeduplicationKey()).to.equal(true);
      await ringDoorbells(producer, consumers);
      expect(adds, 'the ring after the id was freed').to.equal(2);
      expect(await queue.getWaitingCount()).to.equal(2);
    } finally {
      await queue.obliterate({ force: true });
      await producer.close();
      redis.disconnect();
    }
  });
  it('When several consumers ring together and only one doorbell is free, then one round trip reads both and only the free one gets a job', async () => {
    const redis = createRedis(testApp().services.config, 'producer');
    const producer = new QueueProducer(redis, `pair-${process.pid}-${Date.now()}`, 2000);
    const consumers = [STOCK_HISTORY_CONSUMER, ANALYTICS_CONSUMER];
    const history = producer.queue(STOCK_HISTORY_CONSUMER.queue);
    const analytics = producer.queue(ANALYTICS_CONSUMER.queue);
    try {
      await ringDoorbells(producer, consumers);
      expect(await history.getWaitingCount(), 'history: the first ring').to.equal(1);
      expect(await analytics.getWaitingCount(), 'analytics: the first ring').to.equal(1);
      const [analyticsJob] = await analytics.getWaiting();
      expect(await analyticsJob.removeDeduplicationKey()).to.equal(true);
      await ringDoorbells(producer, consumers);
      expect(await history.getWaitingCount(), 'history still held: nothing added').to.equal(1);
      expect(await analytics.getWaitingCount(), 'analytics freed: one more job').to.equal(2);
    } finally {
      await history.obliterate({ force: true });
      await analytics.obliterate({ force: true });
      await producer.close();
      redis.disconnect();
    }
  });
});
