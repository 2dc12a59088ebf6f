import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueueProducer } from '../queues/queue-producer.js';
import { ValidationError } from '../shared/errors.js';
import type { WriteContext } from '../shared/write-context.js';
import { newImportJobId, type ImportKindName } from './import-kinds.js';

export interface ImportRequest {
  kind: ImportKindName;
  content: Buffer;
  dryRun: boolean;
  createSuppliers: boolean;
  /** Language of the report's messages (the request's). */
  language: string;
  userId: number;
  write: WriteContext;
}

/** BullMQ options of an import job: a crash or a transient failure runs it again (it is all-or-nothing). */
export const IMPORT_JOB_OPTIONS = { attempts: 3, backoff: { type: 'exponential', delay: 1000 } };

/**
 * Stores the file and enqueues its import; answers the job id. Single-flight: while an import of the same
 * file (same bytes, kind and options) by the same user is queued or running, its job id is the answer. The
 * file lives in PostgreSQL, so a worker in any process can read it and an import survives a Redis loss (the
 * import sweep re-enqueues it).
 */
export async function requestImport(
  em: EntityManager,
  queues: QueueProducer,
  request: ImportRequest,
): Promise<string> {
  if (request.content.length === 0) throw new ValidationError('csv.import.file.required');
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(request.content);
  } catch {
    throw new ValidationError('csv.import.encoding');
  }
  const hash = createHash('sha256').update(request.content).digest('hex');
  const key = [request.userId, request.kind, hash, request.dryRun, request.createSuppliers];
  let job: { id: string; jobId: string } | undefined;
  for (let attempt = 0; !job && attempt < 5; attempt++) {
    const inserted = await em.execute<{ id: string; jobId: string }[]>(
      `insert into csv_import (user_id, kind, file_hash, dry_run, create_suppliers, content, language,
                               requested_by, correlation_id, public_id)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (user_id, kind, file_hash, dry_run, create_suppliers)
         where state in ('queued', 'running', 'applying')
       do nothing returning id::text as id, public_id as "jobId"`,
      [
        ...key,
        request.content,
        request.language,
        request.write.user,
        request.write.correlationId,
        newImportJobId(),
      ],
    );
    job = inserted[0];
    if (!job) {
      // A repeat: the first import in flight answers (if it finished meanwhile, insert again).
      const existing = await em.execute<{ id: string; jobId: string }[]>(
        `select id::text as id, public_id as "jobId" from csv_import
          where user_id = ? and kind = ? and file_hash = ? and dry_run = ? and create_suppliers = ?
            and state in ('queued', 'running', 'applying') order by id limit 1`,
        key,
      );
      job = existing[0];
    }
  }
  if (!job) throw new Error('could not register the import');
  await queues.addQuietly(
    'imports',
    'import',
    { importId: job.id },
    { ...IMPORT_JOB_OPTIONS, jobId: job.jobId },
  );
  return job.jobId;
}
