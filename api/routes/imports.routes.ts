import Joi from 'joi';
import type { Request } from 'express';
import type { Services } from '../../config/services.js';
import { defineRoutes, type RouteDefinition } from '../routing/route-definition.js';
import { writeContext } from '../routing/write-handler.js';
import { spooledUpload } from '../routing/read-upload.js';
import { presentImportStatus, importStatusSchema } from '../presenters/import-status.js';
import { requestImport } from '../../domain/imports/request-import.js';
import { PART_BYTES } from '../../domain/imports/stored-file.js';
import { getImportStatus } from '../../domain/imports/get-import-status.js';
import { cancelImport } from '../../domain/imports/cancel-import.js';
import type { ImportKindName } from '../../domain/imports/import-kinds.js';

const cancelled = {
  description: 'Cancelled',
  schema: Joi.object({ jobId: Joi.string().required(), state: Joi.string().valid('cancelled').required() }),
};
const accepted = { description: 'Accepted', schema: Joi.object({ jobId: Joi.string().required() }) };
const uploadBody = (maxBytes: number) => ({
  contentTypes: ['text/csv', 'multipart/form-data'],
  description: `The CSV file (UTF-8, header row, \`,\` or \`;\`), as the body or as the \`file\` part of a form; <= ${maxBytes} bytes (IMPORT_MAX_BYTES)`,
});

/** POST (202 + job id), GET (state, progress, report) and DELETE (cancel) of one kind of import. ADMIN only. */
function importRoutes(
  services: Services,
  kind: ImportKindName,
  options: { path: string; tag: string; columns: string; product?: boolean },
): RouteDefinition[] {
  const flags: Record<string, Joi.Schema> = { dryRun: Joi.boolean().default(false) };
  if (kind === 'items') flags.createSuppliers = Joi.boolean().default(false);
  const errorStyle = options.product ? ('product' as const) : ('central' as const);
  return [
    {
      method: 'post',
      path: options.path,
      summary: `Import ${options.columns} from CSV as a background job (dry run with dryRun=true; all or nothing)`,
      tag: options.tag,
      access: 'admin',
      errorStyle,
      request: { query: Joi.object(flags), upload: uploadBody(services.config.importMaxBytes) },
      responses: { 202: accepted },
      handler: async (req: Request, res, { query }) => {
        const upload = await spooledUpload(req, services.config.importMaxBytes, services.spool);
        try {
          const jobId = await requestImport(req.em, services.queues, {
            kind,
            content: upload.parts(PART_BYTES),
            dryRun: query.dryRun,
            createSuppliers: query.createSuppliers ?? false,
            language: req.language ?? 'en',
            userId: req.actor!.userId,
            write: writeContext(req),
          });
          res.status(202).json({ jobId });
        } finally {
          await upload.discard();
        }
      },
    },
    {
      method: 'get',
      path: `${options.path}/:jobId`,
      summary: 'State, progress and (when done) the report of an import, in the language of its request',
      tag: options.tag,
      access: 'admin',
      errorStyle,
      request: { params: Joi.object({ jobId: Joi.string().max(100).required() }) },
      responses: { 200: { description: 'Import state', schema: importStatusSchema } },
      handler: async (req, res, { params }) =>
        res.json(presentImportStatus(services.i18n, await getImportStatus(req.em, kind, params.jobId))),
    },
    {
      method: 'delete',
      path: `${options.path}/:jobId`,
      summary:
        'Cancels a queued or running (validating) import: nothing of it is applied; 409 once it is applying or finished',
      tag: options.tag,
      access: 'admin',
      refusals: {
        409: {
          when: 'The import is applying or finished: it can no longer be cancelled',
          messageKey: 'csv.import.not.cancellable',
        },
      },
      errorStyle,
      request: { params: Joi.object({ jobId: Joi.string().max(100).required() }) },
      responses: { 202: cancelled },
      handler: async (req, res, { params }) => {
        await cancelImport(req.em, kind, params.jobId);
        res.status(202).json({ jobId: params.jobId, state: 'cancelled' });
      },
    },
  ];
}

/** CSV imports of inventory items and of products. Mounted before the `/:id` routes. */
export const csvImportRoutes = (services: Services) =>
  defineRoutes([
    ...importRoutes(services, 'items', {
      path: '/api/inventory/import',
      tag: 'Inventory',
      columns: 'items (name, sku, quantity, price, supplierName, minimumQuantity)',
    }),
    ...importRoutes(services, 'products', {
      path: '/api/products/import',
      tag: 'Products',
      columns: 'products (name, sku, quantity, price, category, description)',
      product: true,
    }),
  ]);
