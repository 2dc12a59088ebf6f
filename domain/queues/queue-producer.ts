import { Queue, type DeduplicationOptions, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../shared/errors.js';
import { withTimeout } from '../shared/with-timeout.js';
import { QUEUE_NAMES, type QueueName } from './queue-names.js';

/** Completed and failed jobs kept per queue (bounded so Redis memory stays flat). */
export const JOB_RETENTION = { removeOnComplete: { count: 1000, age: 86400 }, removeOnFail: { count: 5000 } };

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
   * Best effort, like addQuietly, for a job de-duplicated by `options.deduplication.id`: while a job holds it,
   * BullMQ would swallow the add, and reading the id (one GET) costs this process and Redis a fraction of
   * the add's script. Only when no job holds it is the job added.
   */
  async addUnlessHeld(
    name: QueueName,
    jobName: string,
    data: object,
    options: JobsOptions & { deduplication: DeduplicationOptions },
  ): Promise<boolean> {
    try {
      const holder = await this.bounded(this.queue(name).getDeduplicationJobId(options.deduplication.id));
      if (!holder) await this.add(name, jobName, data, options);
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
