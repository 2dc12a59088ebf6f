import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { listOpenAlerts } from '../../domain/alerts/list-open-alerts.js';

const alert = Joi.object({
  itemId: Joi.string().required(),
  itemName: Joi.string().required(),
  quantity: Joi.number().integer().required(),
  minimumQuantity: Joi.number().integer().required(),
  raisedAt: Joi.string().isoDate().required(),
});

export const alertsRoutes = (_services: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/alerts/low-stock',
      summary: 'Open low-stock alerts (one per item below its minimum), oldest first',
      tag: 'Alerts',
      access: 'auth',
      responses: { 200: { description: 'Open alerts', schema: Joi.array().items(alert) } },
      handler: async (req, res) => res.json(await listOpenAlerts(req.em)),
    },
  ]);
