import type { NextFunction, Request, Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { lazyRequestProperty } from '../lazy-request-property.js';

/**
 * The only place a request EntityManager is created: one fork per request, passed down explicitly. The fork
 * happens on first use, so requests that never touch the database (liveness, metrics, docs) do not pay for it.
 */
export const unitOfWork = (orm: MikroORM) => {
  const withEm = lazyRequestProperty('em', () => orm.em.fork());
  return (req: Request, _res: Response, next: NextFunction) => {
    withEm(req);
    next();
  };
};
