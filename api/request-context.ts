import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Role } from '../domain/users/roles.js';

/** The authenticated principal of a request, re-read from the database on every request. */
export interface Actor {
  userId: number;
  username: string;
  email: string | null;
  role: Role;
  via: 'session' | 'bearer';
}

export interface ValidatedInput {
  params: Record<string, any>;
  query: Record<string, any>;
  body: any;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      correlationId: string;
      /** The request's own EntityManager (forked per request; nothing uses the global one). */
      em: EntityManager;
      actor?: Actor;
      log: Logger;
      /** Error body style of the route: the inventory central body or the product envelope. */
      errorStyle?: 'central' | 'product';
    }
  }
}
