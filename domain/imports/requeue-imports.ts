import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueueProducer } from '../queues/queue-producer.js';
import { IMPORT_JOB_OPTIONS } from './request-import.js';

/**
 * The imports' sweep: an import still queued or running with no progress for `idleMs` is enqueued again
 * (its job id de-duplicates while BullMQ still holds the job), so an import outlives a Redis that lost its
 * job. A worker killed mid-run is covered by BullMQ's stalled-job check; the rerun starts from a clean slate.
 */
export async function requeueImports(
  em: EntityManager,
  queues: QueueProducer,
  idleMs: number,
): Promise<number> {
  const rows = await em.execute<{ id: string; jobId: string }[]>(
    `select id::text as id, public_id as "jobId" from csv_import
      where state in ('queued', 'running', 'applying') and updated_at < now() - make_interval(secs => ?::float8 / 1000)
      order by id limit 100`,
    [idleMs],
  );
  for (const { id, jobId } of rows)
    await queues.add('imports', 'import', { importId: id }, { ...IMPORT_JOB_OPTIONS, jobId });
  return rows.length;
}
