import Joi from 'joi';
import type { i18n } from 'i18next';
import type { ImportStatus } from '../../domain/imports/get-import-status.js';

const rejection = Joi.object({
  line: Joi.number().integer().required(),
  column: Joi.string().allow(null).required(),
  message: Joi.string().required(),
  messageKey: Joi.string().required(),
});

const report = Joi.alternatives(
  Joi.object({
    created: Joi.number().integer().required(),
    updated: Joi.number().integer().required(),
    unchanged: Joi.number().integer().required(),
    rejectedCount: Joi.number().integer().required(),
    rejected: Joi.array().items(rejection).required(),
    applied: Joi.boolean().required(),
  }),
  Joi.object({ error: Joi.string().required() }),
  Joi.valid(null),
);

export const importStatusSchema = Joi.object({
  jobId: Joi.string().required(),
  state: Joi.string().valid('queued', 'running', 'applying', 'completed', 'failed', 'cancelled').required(),
  dryRun: Joi.boolean().required(),
  progress: Joi.object({
    rowsRead: Joi.number().integer().required(),
    rowsTotal: Joi.number().integer().allow(null).required(),
  }).required(),
  createdAt: Joi.string().isoDate().required(),
  startedAt: Joi.string().isoDate().allow(null).required(),
  finishedAt: Joi.string().isoDate().allow(null).required(),
  language: Joi.string().required(),
  report: report.required(),
}).label('ImportStatus');

/** The status with every rejected row's message in the language of the import request. */
export function presentImportStatus(instance: i18n, status: ImportStatus) {
  const t = instance.getFixedT(status.language);
  const { report } = status;
  if (!report || !('rejected' in report)) {
    return report && 'error' in report ? { ...status, report: { error: t('csv.import.failed') } } : status;
  }
  return {
    ...status,
    report: {
      ...report,
      rejected: report.rejected.map(r => ({
        line: r.line,
        column: r.column,
        message: t(r.messageKey, { ...r.params }),
        messageKey: r.messageKey,
      })),
    },
  };
}
