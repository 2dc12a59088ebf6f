import type { NextFunction, Request, Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';

/** The only place a request EntityManager is created: one fork per request, passed down explicitly. */
export const unitOfWork = (orm: MikroORM) => (req: Request, _res: Response, next: NextFunction) => {
  req.em = orm.em.fork();
  next();
};
