import { expect } from 'chai';
import { testApp } from '../setup/hooks.js';
import { createRedis } from '../../config/redis.js';
import { QueueProducer } from '../../domain/queues/queue-producer.js';
import { ServiceUnavailableError } from '../../domain/shared/errors.js';
import { startWorkers } from '../../workers/main.js';
import { freePort } from '../support/ports.js';
import { runJob } from '../support/run-job.js';

describe('Queues and workers', () => {
  it('When Redis is unreachable, then enqueue fails fast with 503 instead of hanging', async () => {
    const redis = createRedis(
      {
        redisUrl: `redis://127.0.0.1:${await freePort()}`,
        redisTls: { ca: undefined, rejectUnauthorized: true },
        redisSentinel: undefined,
      },
      'producer',
    );
    const producer = new QueueProducer(redis, 'unreachable', 200);
    try {
      const started = Date.now();
      let error: unknown;
      try {
        await producer.add('housekeeping', 'cleanup', {});
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(ServiceUnavailableError);
      expect((error as ServiceUnavailableError).status).to.equal(503);
      expect(Date.now() - started).to.be.below(1000);
      expect(await producer.addQuietly('housekeeping', 'cleanup', {})).to.equal(false);
    } finally {
      await producer.close();
      redis.disconnect();
    }
  });

  it('When a housekeeping job is enqueued, then a worker processes it through the real queue', async () => {
    const { services } = testApp();
    const workers = startWorkers(services, { clock: false });
    try {
      const jobId = `cleanup-test-${Date.now()}`;
      const { result } = await runJob(services, 'housekeeping', 'cleanup', jobId, 10000);
      expect(result).to.have.property('housekeeping').that.is.a('number');
      // A second add with the same deterministic id is a no-op while the job is kept.
      const again = await services.queues.add('housekeeping', 'cleanup', {}, { jobId });
      expect(again).to.equal(jobId);
      expect(await services.queues.queue('housekeeping').getJobCounts('completed')).to.deep.equal({
        completed: 1,
      });
    } finally {
      await workers.close();
    }
  });
});
