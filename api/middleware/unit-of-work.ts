import type { Express } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { defineLazyRequestProperty } from '../lazy-request-property.js';

/**
 * The only place a request EntityManager is created: `req.em`, one fork per request, passed down explicitly.
 * The fork happens on first use, so requests that never touch the database (liveness, metrics, docs, reads
 * straight on the pool) do not pay for it.
 */
export const installUnitOfWork = (app: Express, orm: MikroORM): void =>
  defineLazyRequestProperty(app.request, 'em', () => orm.em.fork());
