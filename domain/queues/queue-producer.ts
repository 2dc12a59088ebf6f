import { Queue, type DeduplicationOptions, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../shared/errors.js';
import { withTimeout } from '../shared/with-timeout.js';
import { QUEUE_NAMES, type QueueName } from './queue-names.js';

/** Completed and failed jobs kept per queue (bounded so Redis memory stays flat). */
export const JOB_RETENTION = { removeOnComplete: { count: 1000, age: 86400 }, removeOnFail: { count: 5000 } };

/** A job added only while no job holds its de-duplication id (QueueProducer.addEachUnlessHeld). */
export interface DeduplicatedJob {
  queue: QueueName;
  name: string;
  data: object;
  options: JobsOptions & { deduplication: DeduplicationOptions };
}

/**
 * Adds jobs on the request path. The connection fails fast (no offline queue) and every add is bounded by a
 * hard timeout, so Redis being down costs a request at most `timeoutMs` and never hangs it.
 */
export class QueueProducer {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly timeoutMs: number,
  ) {}

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix, skipVersionCheck: true });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Adds a job or throws ServiceUnavailableError within the timeout. */
  async add(
    name: QueueName,
    jobName: string,
    data: object,
    options: JobsOptions = {},
    timeoutMs = this.timeoutMs,
  ): Promise<string> {
    const job = await this.bounded(
      this.queue(name).add(jobName, data, { ...JOB_RETENTION, ...options }),
      timeoutMs,
    );
    return job.id ?? '';
  }

  /** Redis work on the request path: 503 after `timeoutMs` or on any Redis error, never a hang. */
  private async bounded<T>(operation: Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    try {
      return await withTimeout(
        operation,
        timeoutMs,
        () => new ServiceUnavailableError('error.queue.unavailable'),
      );
    } catch (error) {
      throw error instanceof ServiceUnavailableError
        ? error
        : new ServiceUnavailableError('error.queue.unavailable', { cause: error });
    }
  }

  /** Best effort: a wake-up call that may be lost (the sweeper is the correctness path). */
  async addQuietly(
    name: QueueName,
    jobName: string,
    data: object,
    options: JobsOptions = {},
  ): Promise<boolean> {
    try {
      await this.add(name, jobName, data, options);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Best effort, like addQuietly, for jobs de-duplicated by `options.deduplication.id`: while a job holds its
   * id, BullMQ would swallow the add. The ids of all the jobs are read in ONE round trip (an MGET of the keys
   * BullMQ's `getDeduplicationJobId` reads one by one), a fraction of an add's script for this process and
   * Redis; only the jobs whose id no job holds are added. False when Redis failed or timed out.
   */
  async addEachUnlessHeld(jobs: readonly DeduplicatedJob[]): Promise<boolean> {
    if (jobs.length === 0) return true;
    try {
      const keys = jobs.map(job => `${this.queue(job.queue).keys.de}:${job.options.deduplication.id}`);
      // Once the connection is ready, as BullMQ waits for it (the request path's connection queues nothing).
      const ready = this.queue(jobs[0].queue).waitUntilReady();
      const holders = await this.bounded(ready.then(() => this.connection.mget(keys)));
      await Promise.all(
        jobs
          .filter((_job, index) => !holders[index])
          .map(job => this.add(job.queue, job.name, job.data, job.options)),
      );
      return true;
    } catch {
      return false;
    }
  }

  allQueues(): Queue[] {
    return QUEUE_NAMES.map(name => this.queue(name));
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map(q => q.close().catch(() => undefined)));
    this.queues.clear();
  }
}
