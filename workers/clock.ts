import cron, { type ScheduledTask } from 'node-cron';
import type { Config } from '../config/env.js';
import type { Services } from '../config/services.js';
import type { QueueName } from '../domain/queues/queue-names.js';

interface Schedule {
  name: string;
  /** Five fields, UTC. */
  cron: string;
  queue: QueueName;
  job: string;
  /** Deterministic per period, so several worker processes never enqueue the same run twice. */
  jobId: (now: Date) => string;
}

const day = (now: Date) => now.toISOString().slice(0, 10);

export const SCHEDULES: Schedule[] = [
  {
    name: 'daily-cleanup',
    cron: '15 3 * * *',
    queue: 'housekeeping',
    job: 'cleanup',
    jobId: now => `cleanup-${day(now)}`,
  },
  {
    name: 'nightly-snapshot',
    cron: '5 0 * * *',
    queue: 'analytics',
    job: 'snapshot',
    jobId: now => `snapshot-${day(now)}`,
  },
  {
    name: 'hourly-webhook-sweep',
    cron: '20 * * * *',
    queue: 'webhooks',
    job: 'sweep',
    jobId: now => `webhook-sweep-${now.toISOString().slice(0, 13)}`,
  },
  {
    name: 'daily-integrity-check',
    cron: '45 3 * * *',
    queue: 'integrity',
    job: 'check',
    jobId: now => `integrity-${day(now)}`,
  },
  {
    name: 'imports-sweep',
    cron: '* * * * *',
    queue: 'imports',
    job: 'sweep',
    jobId: now => `imports-sweep-${now.toISOString().slice(0, 16).replace(':', '-')}`,
  },
];

/** The replenishment run at REPLENISHMENT_CRON (its job id per minute, so a day may hold several runs). */
export const replenishmentSchedule = (config: Config): Schedule => ({
  name: 'replenishment-run',
  cron: config.replenishment.cron,
  queue: 'replenishment',
  job: 'run',
  jobId: now => `replenishment-${now.toISOString().slice(0, 16).replace(':', '-')}`,
});

/** node-cron in the worker process. It only enqueues; workers do the work. */
export function startClock(
  services: Services,
  schedules: Schedule[] = [...SCHEDULES, replenishmentSchedule(services.config)],
): { stop(): Promise<void> } {
  const tasks: ScheduledTask[] = schedules.map(schedule =>
    cron.schedule(
      schedule.cron,
      async () => {
        const now = new Date();
        const added = await services.queues.addQuietly(
          schedule.queue,
          schedule.job,
          { at: now.toISOString() },
          {
            jobId: schedule.jobId(now),
          },
        );
        if (!added) services.logger.warn({ schedule: schedule.name }, 'could not enqueue scheduled job');
      },
      { name: schedule.name, timezone: 'UTC', noOverlap: true },
    ),
  );
  return {
    stop: async () => {
      for (const task of tasks) await task.stop();
    },
  };
}
