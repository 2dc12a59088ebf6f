import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { requestRebuild } from '../../domain/analytics/rebuild/request-rebuild.js';
import { getJobStatus, getRebuildStatus } from '../../domain/analytics/rebuild/get-rebuild-status.js';
import { requestIntegrityCheck } from '../../domain/stock-history/request-integrity-check.js';

const status = Joi.object({
  jobId: Joi.string().required(),
  state: Joi.string().required(),
  progress: Joi.number().min(0).max(100).required(),
  startedAt: Joi.string().isoDate().allow(null).required(),
  finishedAt: Joi.string().isoDate().allow(null).required(),
  result: Joi.object().unknown(true).allow(null).required(),
});

/** Admin: rebuild every analytics rollup from the history (a BullMQ job with progress). */
export const adminRoutes = ({ queues }: Services) =>
  defineRoutes([
    {
      method: 'post',
      path: '/api/admin/reports/rebuild',
      changesNoRows: true,
      summary: 'Start a rebuild of every analytics rollup (single-flight: a running one is returned)',
      tag: 'Admin',
      access: 'admin',
      responses: { 202: { description: 'Accepted', schema: Joi.object({ jobId: Joi.string().required() }) } },
      handler: async (req, res) =>
        res.status(202).json({ jobId: await requestRebuild(queues, req.actor?.username ?? 'unknown') }),
    },
    {
      method: 'get',
      path: '/api/admin/reports/rebuild/:jobId',
      summary: 'State and progress of a rebuild job',
      tag: 'Admin',
      access: 'admin',
      request: { params: Joi.object({ jobId: Joi.string().max(100).required() }) },
      responses: { 200: { description: 'Job state', schema: status } },
      handler: async (_req, res, { params }) => res.json(await getRebuildStatus(queues, params.jobId)),
    },
    {
      method: 'post',
      path: '/api/admin/integrity/check',
      changesNoRows: true,
      summary: 'Start an integrity check of the ledger (single-flight; also run daily); never repairs',
      tag: 'Admin',
      access: 'admin',
      responses: { 202: { description: 'Accepted', schema: Joi.object({ jobId: Joi.string().required() }) } },
      handler: async (req, res) =>
        res
          .status(202)
          .json({ jobId: await requestIntegrityCheck(queues, req.actor?.username ?? 'unknown') }),
    },
    {
      method: 'get',
      path: '/api/admin/integrity/check/:jobId',
      summary: 'State, progress and result (drift by kind with entry ids) of an integrity check',
      tag: 'Admin',
      access: 'admin',
      request: { params: Joi.object({ jobId: Joi.string().max(100).required() }) },
      responses: { 200: { description: 'Job state', schema: status } },
      handler: async (_req, res, { params }) =>
        res.json(
          await getJobStatus(queues, 'integrity', 'integrity-', params.jobId, 'admin.integrity.not.found'),
        ),
    },
  ]);
