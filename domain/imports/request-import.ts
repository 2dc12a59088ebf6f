import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueueProducer } from '../queues/queue-producer.js';
import { nativeTransaction, type SqlRun } from '../shared/native-transaction.js';
import type { WriteContext } from '../shared/write-context.js';
import { newImportJobId, type ImportKindName } from './import-kinds.js';
import { writeFileParts } from './write-file-parts.js';

export interface ImportRequest {
  kind: ImportKindName;
  /** The file (an upload already received whole into a spool file): stored part by part, never held whole. */
  content: AsyncIterable<Buffer>;
  dryRun: boolean;
  createSuppliers: boolean;
  /** Language of the report's messages (the request's). */
  language: string;
  userId: number;
  write: WriteContext;
}

/** BullMQ options of an import job: a crash or a transient failure runs it again (it is all-or-nothing). */
export const IMPORT_JOB_OPTIONS = { attempts: 3, backoff: { type: 'exponential', delay: 1000 } };

/** The same file is already being imported: its job answers, and what this request stored is rolled back. */
class Repeat extends Error {
  constructor(readonly job: Job) {
    super('repeat');
  }
}

type Job = { id: string; jobId: string };

/**
 * The import's row, once its file is stored (same transaction); a repeat of an import in flight throws
 * Repeat with that import's job id (if the first finished meanwhile, the row is inserted again).
 */
async function registerImport(sql: SqlRun, id: string, request: ImportRequest, size: number, hash: string) {
  const key = [request.userId, request.kind, hash, request.dryRun, request.createSuppliers];
  for (let attempt = 0; attempt < 5; attempt++) {
    const [job] = await sql<Job>(
      `insert into csv_import (id, user_id, kind, file_hash, dry_run, create_suppliers, size, language,
                               requested_by, correlation_id, public_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       on conflict (user_id, kind, file_hash, dry_run, create_suppliers)
         where state in ('queued', 'running', 'applying')
       do nothing returning id::text as id, public_id as "jobId"`,
      [id, ...key, size, request.language, request.write.user, request.write.correlationId, newImportJobId()],
    );
    if (job) return job;
    const [first] = await sql<Job>(
      `select id::text as id, public_id as "jobId" from csv_import
        where user_id = $1 and kind = $2 and file_hash = $3 and dry_run = $4 and create_suppliers = $5
          and state in ('queued', 'running', 'applying') order by id limit 1`,
      key,
    );
    if (first) throw new Repeat(first);
  }
  throw new Error('could not register the import');
}

/**
 * Stores the file as it arrives and enqueues its import; answers the job id. The parts and the import's row
 * are written in one transaction, so a refused or broken-off upload (the error of `content`) leaves nothing.
 * Single-flight: while an import of the same file (same bytes, kind and options) by the same user is queued or
 * running, its job id is the answer. The file lives in PostgreSQL, so a worker in any process can read it and
 * an import survives a Redis loss (the import sweep re-enqueues it).
 */
export async function requestImport(
  em: EntityManager,
  queues: QueueProducer,
  request: ImportRequest,
): Promise<string> {
  let job: Job;
  try {
    job = await nativeTransaction(em, async (sql, client) => {
      const [{ id }] = await sql<{ id: string }>(
        `select nextval(pg_get_serial_sequence('csv_import', 'id'))::text as id`,
      );
      const { size, hash } = await writeFileParts(client, id, request.content);
      return registerImport(sql, id, request, size, hash);
    });
  } catch (error) {
    if (!(error instanceof Repeat)) throw error;
    job = error.job;
  }
  await queues.addQuietly(
    'imports',
    'import',
    { importId: job.id },
    { ...IMPORT_JOB_OPTIONS, jobId: job.jobId },
  );
  return job.jobId;
}
