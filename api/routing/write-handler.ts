import type { Request, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../config/services.js';
import type { ValidatedInput } from '../request-context.js';
import type { RouteDefinition } from './route-definition.js';
import { publishEvents } from '../../domain/outbox/publish-events.js';
import {
  idempotencyScope,
  withIdempotencyKey,
  type InTransaction,
} from '../../domain/idempotency/with-idempotency-key.js';
import type { Db } from '../../domain/shared/pool-query.js';
import { nativeTransaction, poolRunNow, type SqlRun } from '../../domain/shared/native-transaction.js';
import type { WriteContext } from '../../domain/shared/write-context.js';
import { sendJsonText } from '../presenters/json-response.js';

/** What a write handler answers; sent (and stored for Idempotency-Key replays) by {@link writeHandler}. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Outbox events committed by the write: published after commit, never part of the response. */
  eventIds?: string[];
}

/** The acting user as stored on records and events: e-mail, else username. */
export const writeContext = (req: Request): WriteContext => ({
  user: req.actor?.email ?? req.actor?.username ?? 'anonymous',
  correlationId: req.correlationId ?? null,
});

/** Where a write handler's use case runs: as is, or in one transaction (with an Idempotency-Key). */
interface WriteDb<D extends Db> {
  plain: (req: Request) => D | Promise<D>;
  transaction: (req: Request) => InTransaction<D>;
}

/** The request's EntityManager and its transactions (the unit of work; entities, flush at commit). */
const ORM_WRITES: WriteDb<EntityManager> = {
  plain: req => req.em,
  transaction: req => work => req.em.transactional(work),
};

/**
 * Prepared statements straight on the ORM's pg pool, or on a native transaction of it: no EntityManager is
 * forked and no statement is formatted by the ORM (its transaction sent every statement of an Idempotency-Key
 * write as text with the values inlined, to be parsed and planned every time).
 */
const preparedWrites = (em: EntityManager): WriteDb<SqlRun> => ({
  plain: () => poolRunNow(em),
  transaction: () => work => nativeTransaction(em, work),
});

/**
 * Wraps a write: with an `Idempotency-Key` header the work runs inside the idempotency transaction (the key,
 * the effect and the stored response commit together); without one it runs as is. After commit the outbox
 * events are published (best effort, bounded by ENQUEUE_TIMEOUT_MS), then the response is sent.
 */
export const writeHandler = (
  services: Services,
  run: (em: EntityManager, req: Request, input: ValidatedInput) => Promise<Reply>,
): RouteDefinition['handler'] => handlerOn(services, ORM_WRITES, run);

/** The same for a use case written over `Db` (its statements only; see preparedWrites). */
export const preparedWriteHandler = (
  services: Services,
  run: (db: SqlRun, req: Request, input: ValidatedInput) => Promise<Reply>,
): RouteDefinition['handler'] => handlerOn(services, preparedWrites(services.orm.em), run);

/** The handlers made by {@link writeHandler}: they take an `Idempotency-Key` (the OpenAPI document says so). */
const idempotentHandlers = new WeakSet<RouteDefinition['handler']>();

/** Whether the route's handler takes an `Idempotency-Key` header (409 while in progress, 422 when reused). */
export const takesIdempotencyKey = (route: RouteDefinition) => idempotentHandlers.has(route.handler);

function handlerOn<D extends Db>(
  services: Services,
  db: WriteDb<D>,
  run: (db: D, req: Request, input: ValidatedInput) => Promise<Reply>,
): RouteDefinition['handler'] {
  const handler = async (req: Request, res: Response, input: ValidatedInput) => {
    const key = req.get('idempotency-key');
    let status: number;
    let bodyText: string | null;
    let headers: Record<string, string>;
    let eventIds: string[] = [];
    if (key === undefined || !req.actor) {
      const plain = db.plain(req);
      const reply = await run(plain instanceof Promise ? await plain : plain, req, input);
      status = reply.status;
      bodyText = reply.body === undefined ? null : JSON.stringify(reply.body);
      headers = reply.headers ?? {};
      eventIds = reply.eventIds ?? [];
    } else {
      const scope = idempotencyScope(req.actor.userId, key, {
        method: req.method,
        path: req.path,
        query: req.query,
        body: req.body,
      });
      const stored = await withIdempotencyKey(db.transaction(req), scope, async tx => {
        const reply = await run(tx, req, input);
        eventIds = reply.eventIds ?? [];
        return {
          status: reply.status,
          bodyText: reply.body === undefined ? null : JSON.stringify(reply.body),
          headers: reply.headers ?? {},
        };
      });
      ({ status, bodyText, headers } = stored);
      if (stored.replayed) {
        eventIds = [];
        res.setHeader('Idempotent-Replayed', 'true');
      }
    }
    const ringing = publishEvents(services.queues, eventIds);
    if (ringing) await ringing;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.status(status);
    if (bodyText === null) res.end();
    else sendJsonText(res, bodyText);
  };
  idempotentHandlers.add(handler);
  return handler;
}
