import type { Request, Response } from 'express';
import type Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ValidatedInput } from '../request-context.js';

/**
 * public: anyone; auth: any signed-in user; user: ROLE_USER or ROLE_ADMIN; admin: ROLE_ADMIN.
 * `demoRead` makes a read public while APP_DEMO_READONLY is on. Every non-GET route is a write, answered 403
 * for everyone in demo mode.
 */
export type Access = 'public' | 'auth' | 'user' | 'admin';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omit for an empty body (204) or a non-JSON body. */
  schema?: Joi.Schema;
  contentType?: string;
  /** Response headers: name -> description (documented as strings). */
  headers?: Record<string, string>;
}

/** A refusal of the use case itself: when it happens and the message key of its answer (the example). */
export interface Refusal {
  when: string;
  messageKey: string;
}

export interface RouteDefinition {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express path, e.g. `/api/inventory/:id`. */
  path: string;
  summary: string;
  tag: string;
  access: Access;
  demoRead?: boolean;
  /** Writes that stay allowed in demo mode (login and logout). */
  allowedInDemo?: boolean;
  errorStyle?: 'central' | 'product';
  request?: {
    params?: Joi.ObjectSchema;
    query?: Joi.ObjectSchema;
    body?: Joi.Schema;
    /** A non-JSON body the handler reads itself (a file upload): documented, not validated by joi. */
    upload?: { contentTypes: string[]; description: string };
  };
  /**
   * The resource the path names, when it must exist before the query and body are looked at (404 first):
   * runs after the path params are validated and throws the resource's NotFoundError (or whatever else the
   * contract checks before the body: a stale `If-Match`, a state that refuses the write).
   */
  mustExist?: (em: EntityManager, params: Record<string, any>, req: Request) => Promise<void>;
  /** Success answers (and a route's own answers such as a health check's 503). */
  responses: Record<number, ResponseSpec>;
  /**
   * What the use case refuses beyond what the route's shape implies (access, input, path ids, body, streams,
   * writes, Idempotency-Key: see api/openapi/operation-statuses.ts): 409, 410, 412, 422, 428, 429...
   */
  refusals?: Record<number, Refusal>;
  /**
   * A write that changes no row in a transaction (a read sent as POST, a sign-in or sign-out, a job handed to
   * the queue): it cannot lose a deadlock or a serialization check, so it never answers that 409.
   */
  changesNoRows?: boolean;
  /**
   * A health check: no session is loaded for it (a signed-in browser's cookie is ignored), so it answers what
   * it checks while the session store is away, and it lists no 503 of its own beyond its declared responses.
   */
  sessionless?: boolean;
  /** The path names a resource, but one that does not exist reads as empty (200 []), never 404. */
  absentReadsEmpty?: boolean;
  /** Thin: read `input`, call one use case, present the result. */
  handler: (req: Request, res: Response, input: ValidatedInput) => unknown;
  /**
   * The answer streams rows: `counted` through `services.rows` (exports, unpaged history: a STREAMS_PER_USER
   * slot, 429 beyond), `uncounted` through `services.lists`. Documents the refusals (429, 503 with Retry-After).
   */
  stream?: 'counted' | 'uncounted';
  /** Hidden from the OpenAPI document (never used for business routes). */
  internal?: boolean;
}

export const defineRoutes = (routes: RouteDefinition[]): RouteDefinition[] => routes;
