import type { Services } from '../../config/services.js';
import type { RouteDefinition } from '../routing/route-definition.js';
import { authRoutes } from './auth.routes.js';
import { healthRoutes } from './health.routes.js';
import { analyticsRoutes } from './analytics.routes.js';
import { alertsRoutes } from './alerts.routes.js';
import { adminRoutes } from './admin.routes.js';

/** Every route of the API, in mounting order. The OpenAPI document is generated from this list. */
export const allRoutes = (services: Services): RouteDefinition[] => [
  ...healthRoutes(services),
  ...authRoutes(services),
  ...analyticsRoutes(services),
  ...alertsRoutes(services),
  ...adminRoutes(services),
];
