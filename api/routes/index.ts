import type { Services } from '../../config/services.js';
import type { RouteDefinition } from '../routing/route-definition.js';
import { authRoutes } from './auth.routes.js';
import { healthRoutes } from './health.routes.js';
import { productRoutes } from './products.routes.js';
import { itemRoutes } from './items.routes.js';
import { supplierRoutes } from './suppliers.routes.js';
import { stockHistoryRoutes } from './stock-history.routes.js';
import { browserAuthRoutes } from './browser-auth.routes.js';
import { analyticsRoutes } from './analytics.routes.js';
import { alertsRoutes } from './alerts.routes.js';
import { adminRoutes } from './admin.routes.js';
import { exportRoutes } from './exports.routes.js';
import { csvImportRoutes } from './imports.routes.js';
import { replenishmentRoutes } from './replenishment.routes.js';
import { purchasingRoutes } from './purchasing.routes.js';

/** Every route of the API, in mounting order. The OpenAPI document is generated from this list. */
export const allRoutes = (services: Services): RouteDefinition[] => [
  ...healthRoutes(services),
  ...authRoutes(services),
  // Literal CSV paths before the `/:id` routes of the same prefixes.
  ...exportRoutes(services),
  ...csvImportRoutes(services),
  ...productRoutes(services),
  ...itemRoutes(services),
  ...supplierRoutes(services),
  ...stockHistoryRoutes(services),
  ...purchasingRoutes(services),
  ...browserAuthRoutes(services),
  ...analyticsRoutes(services),
  ...alertsRoutes(services),
  ...adminRoutes(services),
  ...replenishmentRoutes(services),
];
