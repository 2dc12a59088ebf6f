import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, UnprocessableError, ValidationError } from '../shared/errors.js';
import { dbQuery, type Db } from '../shared/pool-query.js';

/** A write's response as stored and replayed. */
export interface StoredReply {
  status: number;
  /** JSON text exactly as sent the first time (replays are byte-identical). */
  bodyText: string | null;
  headers: Record<string, string>;
  replayed: boolean;
}

export interface IdempotencyScope {
  userId: number;
  key: string;
  /** sha256 of method + path + query + body. */
  fingerprint: string;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

export function idempotencyScope(
  userId: number,
  key: string,
  request: { method: string; path: string; query: unknown; body: unknown },
): IdempotencyScope {
  if (!KEY.test(key)) throw new ValidationError('error.idempotency.key.invalid');
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([request.method, request.path, request.query ?? {}, request.body ?? null]))
    .digest('hex');
  return { userId, key, fingerprint };
}

/** Runs `work` in ONE transaction on a `Db` of its own (an ORM transaction, or a native one). */
export type InTransaction<D extends Db> = <T>(work: (db: D) => Promise<T>) => Promise<T>;

/**
 * Runs `work` at most once per (user, key) within 24 h. The key row is inserted (or an expired one taken over) in
 * the SAME transaction as the work's effect, together with the response: the effect and its recorded response
 * commit together or not at all. A concurrent repeat blocks on the primary key until the first commits, then
 * replays the stored response (or, if the first rolled back, does the work itself). The same key with a
 * different request -> 422. Errors are not stored: the transaction (and the key) roll back, so a retry runs
 * again. `transaction` decides the kind: a route whose work runs on a native transaction (`Db`) has every
 * statement prepared on the transaction's connection, without the ORM's unit of work.
 */
export async function withIdempotencyKey<D extends Db>(
  transaction: InTransaction<D>,
  scope: IdempotencyScope,
  work: (db: D) => Promise<Omit<StoredReply, 'replayed'>>,
): Promise<StoredReply> {
  return transaction(async db => {
    // The key is taken by inserting it, or by taking over the row of an expired use of it (older than 24 h:
    // the key is free again) in the same statement; a live row is left alone (the update's condition is
    // false), so nothing returns and the stored response is replayed below.
    const inserted = await dbQuery(
      db,
      `insert into idempotency_key (user_id, key, fingerprint, response_status) values (?, ?, ?, 0)
       on conflict (user_id, key) do update
         set fingerprint = excluded.fingerprint, response_status = 0, response_body = null,
             response_headers = '{}', created_at = now()
         where idempotency_key.created_at < now() - interval '24 hours'
       returning user_id`,
      [scope.userId, scope.key, scope.fingerprint],
    );
    if (inserted.length === 0) {
      const rows = await dbQuery<{
        fingerprint: string;
        response_status: number;
        response_body: string | null;
        response_headers: Record<string, string>;
      }>(
        db,
        'select fingerprint, response_status, response_body, response_headers from idempotency_key where user_id = ? and key = ?',
        [scope.userId, scope.key],
      );
      if (rows.length === 0) throw new ConflictError('error.idempotency.in.progress');
      const row = rows[0];
      if (row.fingerprint !== scope.fingerprint) throw new UnprocessableError('error.idempotency.key.reused');
      return {
        status: Number(row.response_status),
        bodyText: row.response_body,
        headers: row.response_headers ?? {},
        replayed: true,
      };
    }
    const reply = await work(db);
    await dbQuery(
      db,
      `update idempotency_key set response_status = ?, response_body = ?, response_headers = ?::jsonb
        where user_id = ? and key = ?`,
      [reply.status, reply.bodyText, JSON.stringify(reply.headers), scope.userId, scope.key],
    );
    return { ...reply, replayed: false };
  });
}

/** Housekeeping: keys older than 24 h. */
export async function purgeIdempotencyKeys(em: EntityManager): Promise<number> {
  const rows = await em.execute(
    `delete from idempotency_key where created_at < now() - interval '24 hours' returning 1`,
  );
  return rows.length;
}
