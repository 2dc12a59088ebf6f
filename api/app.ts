import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import cors from 'cors';
import type { Services } from '../config/services.js';
import { correlationId } from './middleware/correlation-id.js';
import { accessLog, installRequestLogger } from './middleware/request-log.js';
import { onResponseDone } from './middleware/on-response-done.js';
import { installUnitOfWork } from './middleware/unit-of-work.js';
import { language } from './middleware/language.js';
import { rejectNul } from './middleware/reject-nul.js';
import { jsonBody } from './middleware/json-body.js';
import { authenticate } from './middleware/authenticate.js';
import { csrfGuard } from './middleware/csrf.js';
import { Gauge } from 'prom-client';
import { createMetrics } from './middleware/metrics.js';
import { requireMetricsToken } from './middleware/require-metrics-token.js';
import { latestDriftItems } from '../domain/stock-history/request-integrity-check.js';
import { errorHandler, errorStyle, notFound } from './middleware/error-handler.js';
import { sessionMiddleware } from './auth/session.js';
import { dispatchRoutes } from './routing/dispatch-routes.js';
import { replicaRouting } from './routing/replica-reads.js';
import { enterApiFirst } from './routing/enter-api-first.js';
import {
  API_CONTENT_SECURITY_POLICY,
  DOCUMENT_ONLY_HEADERS_OFF,
  pageSecurityPolicy,
  securityHeaders,
} from './middleware/security-headers.js';
import { installQueryOnce } from './middleware/parse-query-once.js';
import { installJsonResponse } from './presenters/json-response.js';
import { allRoutes } from './routes/index.js';
import { buildOpenApi } from './openapi/build-openapi.js';
import type { RouteDefinition } from './routing/route-definition.js';
import { requireAdmin } from './middleware/require-admin.js';
import { QUEUE_DASHBOARD_PATH } from './queue-dashboard-path.js';
import { lazyRouter } from './routing/lazy-router.js';

export interface BuiltApp {
  app: Express;
  routes: RouteDefinition[];
  openapi: Record<string, any>;
}

/** Builds the Express app (no listen): used by the server and by the tests, which listen on port 0. */
export function createApp(services: Services): BuiltApp {
  const { config, logger, orm, redis, i18n } = services;
  const app = express();
  const routes = allRoutes(services);
  // Built on first use (the document and joi-to-json stay out of a process nobody asks for them).
  let document: Record<string, any> | undefined;
  const openapi = () =>
    (document ??= buildOpenApi(routes, { title: 'Stockroom API', version: '1.0.0' }, key =>
      i18n.t(key, { lng: 'en' }),
    ));
  const metrics = createMetrics(services.replicas);
  // The latest finished integrity check (whichever worker process ran it), read when Prometheus scrapes.
  new Gauge({
    name: 'stockroom_integrity_drift_items',
    help: 'Items with drift found by the latest finished integrity check',
    registers: [metrics.registry],
    async collect() {
      const items = await latestDriftItems(services.queues).catch(() => null);
      if (items !== null) this.set(items);
    },
  });
  const grantCrossOrigin = cors({
    // Unlisted origins (and requests without Origin) get no CORS header at all, not even Allow-Credentials.
    origin: (origin, callback) =>
      callback(null, origin !== undefined && config.corsOrigins.includes(origin) ? origin : false),
    credentials: true,
    exposedHeaders: ['X-Correlation-Id', 'ETag', 'Location'],
  });
  // A request without Origin gets nothing from cors (above), so it does not pass through it.
  const crossOrigin = (req: Request, res: Response, next: NextFunction) =>
    req.headers.origin === undefined ? next() : grantCrossOrigin(req, res, next);

  app.disable('x-powered-by');
  // Single-item responses set their own ETag (the row version); no hash of every JSON body.
  app.set('etag', false);
  // Who may say the client's address (X-Forwarded-For) and scheme: TRUST_PROXY. req.ip is then the address
  // the first untrusted hop connected from, which a client cannot choose by sending its own header.
  app.set('trust proxy', typeof config.trustProxy === 'number' ? config.trustProxy : [...config.trustProxy]);
  app.set('query parser', 'simple');
  // Read by every streamed answer (presenters/stream-response.ts): how long a client may take no data.
  app.locals.streamIdleTimeoutMs = config.streamIdleTimeoutMs;
  // ...and where it is spooled before it is sent.
  app.locals.spool = services.spool;
  // req.log, req.em and req.query: made on first read, through accessors on the app's request prototype.
  installRequestLogger(app, logger);
  installUnitOfWork(app, orm);
  installQueryOnce(app);
  installJsonResponse(app);
  // Everything a request passes before the routes, then the API routes' radix-tree dispatch, run as ONE list
  // (run-chain.ts) before Express's router (enterApiFirst); what no API route matches, and every error, goes
  // on to Express's layers below (docs, metrics, 404, the error handler).
  enterApiFirst(app, [
    correlationId,
    onResponseDone([metrics.observe, accessLog(logger)]),
    securityHeaders(
      {
        hsts: { maxAge: 31536000, includeSubDomains: true },
        contentSecurityPolicy: API_CONTENT_SECURITY_POLICY,
        ...DOCUMENT_ONLY_HEADERS_OFF,
      },
      // Nothing the API answers may be stored by a cache (S13).
      { 'Cache-Control': 'no-store' },
    ),
    crossOrigin,
    language(i18n),
    errorStyle,
    jsonBody(),
    rejectNul,
    sessionMiddleware(
      config,
      redis,
      routes.filter(route => route.sessionless).map(route => route.path),
    ),
    authenticate(config, services.accounts),
    csrfGuard(config),
    dispatchRoutes(routes, config, replicaRouting(services, metrics.countRead)),
  ]);
  app.get('/api/openapi.json', (_req, res) => res.json(openapi()));
  app.use(
    '/api/docs',
    pageSecurityPolicy(),
    lazyRouter(async () => {
      const { default: swaggerUi } = await import('swagger-ui-express');
      return [...swaggerUi.serve, swaggerUi.setup(openapi())];
    }),
  );
  app.get('/metrics', requireMetricsToken(config.metricsToken), async (_req, res) => {
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  app.use(
    QUEUE_DASHBOARD_PATH,
    requireAdmin,
    pageSecurityPolicy(),
    lazyRouter(async () => (await import('./queue-dashboard.js')).queueDashboard(services.queues)),
  );
  app.use(notFound);
  app.use(errorHandler);
  return {
    app,
    routes,
    get openapi() {
      return openapi();
    },
  };
}
