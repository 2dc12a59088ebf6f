import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';

const liveness = Joi.object({
  status: Joi.string().valid('ok').required(),
  database: Joi.string().valid('ok', 'down', 'unknown').required(),
  databaseProduct: Joi.string().valid('PostgreSQL').required(),
  timestamp: Joi.number().integer().required(),
});
const deepUp = Joi.object({
  status: Joi.string().valid('UP').required(),
  databaseSeesIp: Joi.string().min(1).required(),
});
const deepDown = Joi.object({ status: Joi.string().valid('DOWN').required() });
const productHealth = Joi.object({
  status: Joi.string().valid('UP', 'DOWN').required(),
  db: Joi.string().valid('UP', 'DOWN').required(),
});

/** Health checks: no authentication, no demo-mode rule. */
export const healthRoutes = ({ probe }: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/health',
      summary: 'Liveness: answers from the last background database probe, touches nothing itself',
      tag: 'Health',
      access: 'public',
      sessionless: true,
      responses: { 200: { description: 'Alive', schema: liveness } },
      handler: (_req, res) =>
        res.json({
          status: 'ok',
          database: probe.state,
          databaseProduct: 'PostgreSQL',
          timestamp: Date.now(),
        }),
    },
    {
      method: 'get',
      path: '/api/health/db',
      summary: 'Deep database check: a real round trip within 3 s',
      tag: 'Health',
      access: 'public',
      sessionless: true,
      responses: {
        200: { description: 'Database reachable', schema: deepUp },
        503: { description: 'Database unreachable or paused', schema: deepDown },
      },
      handler: async (_req, res) => {
        try {
          res.json({ status: 'UP', databaseSeesIp: await probe.check(3000) });
        } catch {
          res.status(503).json({ status: 'DOWN' });
        }
      },
    },
    {
      method: 'get',
      path: '/health',
      summary: 'Product-service health check (database round trip)',
      tag: 'Health',
      access: 'public',
      sessionless: true,
      responses: {
        200: { description: 'Up', schema: productHealth },
        500: { description: 'Database down', schema: productHealth },
      },
      handler: async (_req, res) => {
        try {
          await probe.check(3000);
          res.json({ status: 'UP', db: 'UP' });
        } catch {
          res.status(500).json({ status: 'DOWN', db: 'DOWN' });
        }
      },
    },
  ]);
