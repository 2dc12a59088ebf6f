import type { Request, Response } from 'express';
import type { Services } from '../../config/services.js';
import type { ReadReplicas } from '../../config/read-replicas.js';
import { AppError } from '../../domain/shared/errors.js';
import type { RouteDefinition } from './route-definition.js';
import { ClientWritePositions } from './client-write-positions.js';
import { cursorKey, cursorPosition } from '../../domain/stock-history/history-cursor.js';

type Run = (req: Request, res: Response) => unknown;

/** Where a read ran: a replica, the primary (none usable), or the primary after the replica failed it. */
export type ReadTarget = 'replica' | 'primary' | 'fallback';

/** The paged history reads and searches (the history reads with `size`, the history search); their unpaged forms stream on the primary. */
const HISTORY_READS = new Set([
  '/api/stock-history',
  '/api/stock-history/search',
  '/api/stock-history/item/:itemId',
  '/api/stock-history/reason/:reason',
]);

/**
 * The WAL position a replica must have replayed to serve this read beyond the caller's own writes: a history
 * walk's page after the first, where its first page's snapshot saw nothing above the cursor's position;
 * undefined: on the primary (a history read without a cursor, or with one that does not parse: its first page
 * records a snapshot the walk relies on, which a hot standby cannot give, see history-cursor).
 */
function readFloor(route: RouteDefinition, req: Request, key: Buffer): number | undefined {
  if (!HISTORY_READS.has(route.path)) return 0;
  const cursor = req.query.cursor;
  return typeof cursor === 'string' ? cursorPosition(cursor, key) : undefined;
}

/**
 * The routes whose reads may run on a replica: analytics (the analytics reads, the reason and employee reads, including the stock updates query's POST, a read) and the
 * history reads. Their unit of work (`req.em`) is what moves; streams (services.rows), sessions, the account
 * cache and every write stay on the primary.
 */
export const readsOnReplica = (route: RouteDefinition): boolean =>
  (route.method === 'get' || route.path === '/api/analytics/stock-updates/query') &&
  (route.path.startsWith('/api/analytics/') || HISTORY_READS.has(route.path));

/** A client's writes must not be hidden by a replica: the span of what may be stale after one, with margin. */
const positionTtlMs = (maxLagMs: number) => Math.max(60000, 10 * maxLagMs);

/**
 * Connection selection for the routes (dispatch-routes.ts) when replicas are configured: a replica read runs
 * its handler on a replica's unit of work when one is caught up with the caller's own writes, else on the
 * primary; a write records the caller's position. Undefined without replicas (nothing is wrapped).
 */
export function replicaRouting(
  services: Services,
  count: (target: ReadTarget) => void,
): ((route: RouteDefinition, run: Run) => Run) | undefined {
  const { replicas } = services;
  if (!replicas) return undefined;
  const key = cursorKey(services.config.sessionSecret);
  const positions = new ClientWritePositions(
    services.redis,
    services.config.redisPrefix,
    positionTtlMs(replicas.maxLagMs),
    services.config.enqueueTimeoutMs,
  );
  return (route, run) => {
    if (readsOnReplica(route))
      return onReplica(services, replicas, positions, count, run, req => readFloor(route, req, key));
    if (route.method !== 'get') return recordingPosition(replicas, positions, run);
    return run;
  };
}

function onReplica(
  services: Services,
  replicas: ReadReplicas,
  positions: ClientWritePositions,
  count: (target: ReadTarget) => void,
  run: Run,
  readFloor: (req: Request) => number | undefined,
): Run {
  return async (req, res) => {
    const own = readFloor(req);
    const floor = own === undefined ? undefined : req.actor ? await positions.floor(req.actor.userId) : 0;
    const replica =
      floor === undefined || own === undefined ? undefined : replicas.pick(Math.max(floor, own));
    if (!replica) {
      count('primary');
      return run(req, res);
    }
    req.em = replica.fork();
    try {
      await run(req, res);
      count('replica');
    } catch (error) {
      // The request's own outcomes (AppErrors: a 4xx, or a 503 of a pool of the primary such as the stream
      // pool) stand; a database error (the replica down, restarting, a query cancelled by a conflict with
      // recovery) is answered by the primary within the request.
      if (res.headersSent || error instanceof AppError) throw error;
      replicas.failed(replica, error);
      count('fallback');
      req.em = services.orm.em.fork();
      await run(req, res);
    }
  };
}

function recordingPosition(replicas: ReadReplicas, positions: ClientWritePositions, run: Run): Run {
  return async (req, res) => {
    const client = req.actor?.userId;
    if (client === undefined) return run(req, res);
    await positions.begin(client);
    try {
      await run(req, res);
    } finally {
      // After the answer (a failed write may have committed too). If the position cannot be read or stored, the
      // client's write stays "in flight" until its hash expires: its reads stay on the primary until then.
      void replicas
        .primaryLsn()
        .then(lsn => positions.end(client, lsn))
        .catch(error =>
          req.log.warn({ err: error }, 'could not record a write position for read-your-writes'),
        );
    }
  };
}
