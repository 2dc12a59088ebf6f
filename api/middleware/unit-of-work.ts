import type { NextFunction, Request, Response } from 'express';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/**
 * The only place a request EntityManager is created: one fork per request, passed down explicitly. The fork
 * happens on first use, so requests that never touch the database (liveness, metrics, docs) do not pay for it.
 */
export const unitOfWork = (orm: MikroORM) => (req: Request, _res: Response, next: NextFunction) => {
  let em: EntityManager | undefined;
  Object.defineProperty(req, 'em', {
    configurable: true,
    enumerable: false,
    get: () => (em ??= orm.em.fork()),
  });
  next();
};
