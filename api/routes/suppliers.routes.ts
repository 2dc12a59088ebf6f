import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes } from '../routing/route-definition.js';
import { writeContext, writeHandler } from '../routing/write-handler.js';
import { springPageSchema } from '../presenters/page.js';
import { sendJsonArray } from '../presenters/stream-response.js';
import { toSupplierView } from '../../domain/suppliers/supplier.view.js';
import {
  createSupplierBody,
  listSuppliersQuery,
  searchSuppliersQuery,
  supplierIdParams,
  supplierViewSchema,
  updateSupplierBody,
} from '../../domain/suppliers/suppliers.schemas.js';
import {
  countSuppliers,
  getSupplier,
  pageSuppliers,
  supplierListQuery,
  searchSuppliers,
} from '../../domain/suppliers/supplier-queries.js';
import { createSupplier } from '../../domain/suppliers/create-supplier.js';
import { updateSupplier } from '../../domain/suppliers/update-supplier.js';
import { deleteSupplier } from '../../domain/suppliers/delete-supplier.js';

const TAG = 'Suppliers';

/** The supplier routes. */
export const supplierRoutes = (services: Services) =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/suppliers',
      summary: 'Suppliers (plain array; Spring-style page when `size` is given)',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      stream: 'uncounted',
      request: { query: listSuppliersQuery },
      responses: {
        200: {
          description: 'Suppliers',
          schema: Joi.alternatives(
            Joi.array().items(supplierViewSchema),
            springPageSchema(supplierViewSchema),
          ),
        },
      },
      handler: async (req, res, { query }) => {
        if (query.size !== undefined) res.json(await pageSuppliers(req.em, query));
        else
          await sendJsonArray(req, res, await services.lists.open(supplierListQuery(query), toSupplierView));
      },
    },
    {
      method: 'get',
      path: '/api/suppliers/count',
      summary: 'Number of suppliers',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      responses: { 200: { description: 'Count', schema: Joi.number().integer() } },
      handler: async (req, res) => res.json(await countSuppliers(req.em)),
    },
    {
      method: 'get',
      path: '/api/suppliers/search',
      summary: 'Suppliers whose name contains `name`',
      tag: TAG,
      access: 'auth',
      demoRead: true,
      request: { query: searchSuppliersQuery },
      responses: { 200: { description: 'Suppliers', schema: Joi.array().items(supplierViewSchema) } },
      handler: async (req, res, { query }) => res.json(await searchSuppliers(req.em, query.name)),
    },
    {
      method: 'post',
      path: '/api/suppliers',
      summary: 'Create a supplier',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: {
          when: 'A supplier with this name (case-insensitive) exists',
          messageKey: 'error.duplicate.resource',
        },
      },
      request: { body: createSupplierBody },
      responses: { 201: { description: 'Created', schema: supplierViewSchema } },
      handler: writeHandler(services, async (em, req, { body }) => {
        const supplier = await createSupplier(em, body, writeContext(req));
        return { status: 201, body: supplier, headers: { Location: `/api/suppliers/${supplier.id}` } };
      }),
    },
    {
      method: 'get',
      path: '/api/suppliers/:id',
      summary: 'One supplier',
      tag: TAG,
      access: 'auth',
      request: { params: supplierIdParams },
      responses: { 200: { description: 'Supplier', schema: supplierViewSchema } },
      handler: async (req, res, { params }) => res.json(await getSupplier(req.em, params.id)),
    },
    {
      method: 'put',
      path: '/api/suppliers/:id',
      summary: 'Replace a supplier (a body id must equal the path id)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: { when: 'Another supplier has this name', messageKey: 'error.duplicate.resource' },
      },
      request: { params: supplierIdParams, body: updateSupplierBody },
      responses: { 200: { description: 'Updated', schema: supplierViewSchema } },
      handler: writeHandler(services, async (em, _req, { params, body }) => ({
        status: 200,
        body: await updateSupplier(em, params.id, body),
      })),
    },
    {
      method: 'delete',
      path: '/api/suppliers/:id',
      summary: 'Delete a supplier no item references',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: {
          when: 'Items or purchase orders still reference the supplier',
          messageKey: 'inventory.supplier.in.use',
        },
      },
      request: { params: supplierIdParams },
      responses: { 204: { description: 'Deleted' } },
      handler: writeHandler(services, async (em, _req, { params }) => {
        await deleteSupplier(em, params.id);
        return { status: 204 };
      }),
    },
  ]);
