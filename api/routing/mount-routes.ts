import type { Express, NextFunction, Request, Response } from 'express';
import type { Config } from '../../config/env.js';
import type { RouteDefinition } from './route-definition.js';
import { authorize } from '../middleware/authorize.js';
import { validateInput } from '../middleware/validate.js';

/** Mounts each route as: error style -> authorize -> validate -> handler. */
export function mountRoutes(app: Express, routes: RouteDefinition[], config: Config): void {
  for (const route of routes) {
    const style = (req: Request, _res: Response, next: NextFunction) => {
      req.errorStyle = route.errorStyle ?? 'central';
      next();
    };
    const run = async (req: Request, res: Response) => {
      await route.handler(req, res, res.locals.input);
    };
    app[route.method](route.path, style, authorize(route, config), validateInput(route), run);
  }
}
