import type { Services } from '../../config/services.js';
import type { RouteDefinition } from '../routing/route-definition.js';
import { authRoutes } from './auth.routes.js';
import { healthRoutes } from './health.routes.js';
import { browserAuthRoutes } from './browser-auth.routes.js';

/** Every route of the API, in mounting order. The OpenAPI document is generated from this list. */
export const allRoutes = (services: Services): RouteDefinition[] => [
  ...healthRoutes(services),
  ...authRoutes(services),
  ...browserAuthRoutes(services),
];
