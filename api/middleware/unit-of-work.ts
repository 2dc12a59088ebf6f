import type { NextFunction, Request, Response } from 'express';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/**
 * The only place a request EntityManager is created: one fork per request, passed down explicitly. The fork
 * happens on first use, so requests that never touch the database (liveness, metrics, docs) do not pay for it.
 */
export const unitOfWork = (orm: MikroORM) => {
  const fork = Symbol('request EntityManager');
  const prototypes = new WeakSet<object>();
  return (req: Request, _res: Response, next: NextFunction) => {
    // An accessor on the app's request prototype, defined once, instead of a property and a closure per request.
    const prototype = Object.getPrototypeOf(req) as object;
    if (!prototypes.has(prototype)) {
      prototypes.add(prototype);
      Object.defineProperty(prototype, 'em', {
        configurable: true,
        enumerable: false,
        get(this: Request & { [fork]?: EntityManager }) {
          return (this[fork] ??= orm.em.fork());
        },
      });
    }
    next();
  };
};
