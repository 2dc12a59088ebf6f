import Joi from 'joi';
import type { Services } from '../../config/services.js';
import { defineRoutes, type RouteDefinition } from '../routing/route-definition.js';
import { envelope, envelopeSchema } from '../presenters/envelope.js';
import { sendJsonArray } from '../presenters/stream-response.js';
import { toProductView } from '../../domain/catalog/product.view.js';
import { ValidationError } from '../../domain/shared/errors.js';
import {
  bulkDeleteBody,
  createProductBody,
  listQuery,
  nameBody,
  pagedQuery,
  priceBody,
  productIdParams,
  quantityBody,
  searchQuery,
  stockBatchBody,
  updateProductBody,
} from '../../domain/catalog/catalog.schemas.js';
import { createProduct } from '../../domain/catalog/create-product.js';
import { updateProductFields } from '../../domain/catalog/update-product-fields.js';
import { updateProductQuantity } from '../../domain/catalog/update-product-quantity.js';
import { updateProductPrice } from '../../domain/catalog/update-product-price.js';
import { renameProduct } from '../../domain/catalog/rename-product.js';
import { deleteProduct } from '../../domain/catalog/delete-product.js';
import { deleteProducts } from '../../domain/catalog/delete-products.js';
import { updateStockBatch } from '../../domain/catalog/update-stock-batch.js';
import {
  getProduct,
  productListQuery,
  lowStockProducts,
  pagedProducts,
  searchProducts,
  totalStockValue,
} from '../../domain/catalog/product-queries.js';

const iso = Joi.string().isoDate().required();

/** The product record of both client generations: `price` and `purchasePrice`, `sku`, three timestamps. */
const productSchema = Joi.object({
  id: Joi.number().integer().required(),
  name: Joi.string().required(),
  quantity: Joi.number().integer().min(0).required(),
  price: Joi.number().required(),
  purchasePrice: Joi.number().required(),
  sku: Joi.string().required(),
  totalValue: Joi.number().required(),
  category: Joi.string().allow(null).required(),
  description: Joi.string().allow(null).required(),
  createdAt: iso,
  updatedAt: iso,
  lastUpdated: iso,
}).label('Product');

const productList = Joi.array().items(productSchema);

const pageSchema = Joi.object({
  content: productList.required(),
  pageNumber: Joi.number().integer().required(),
  currentPage: Joi.number().integer().required(),
  pageSize: Joi.number().integer().required(),
  totalElements: Joi.number().integer().required(),
  totalPages: Joi.number().integer().required(),
});

const lowStockSchema = Joi.alternatives().try(productList, Joi.object({ message: Joi.string().required() }));

const TAG = 'Products';
const actorName = (req: Parameters<RouteDefinition['handler']>[0]) => req.actor!.username;

/**
 * The product API (contract: product-api.md): both client generations at once. Literal paths come before
 * `/:id`. Errors use the product envelope.
 */
export const productRoutes = ({ config, lists }: Services): RouteDefinition[] =>
  defineRoutes([
    {
      method: 'get',
      path: '/api/products/paged',
      summary: 'Products page by page (sorted by id)',
      tag: TAG,
      access: 'user',
      request: { query: pagedQuery },
      responses: { 200: { description: 'Page', schema: envelopeSchema(pageSchema) } },
      handler: async (req, res, { query }) =>
        res.json(
          envelope(req.t('product.paged.fetched'), await pagedProducts(req.em, query.page, query.size)),
        ),
    },
    {
      method: 'get',
      path: '/api/products/search',
      summary: 'Search by name (`name`) or by name, description, sku and category (`q`)',
      tag: TAG,
      access: 'user',
      request: { query: searchQuery },
      responses: {
        200: { description: 'Matching products', schema: productList },
        204: { description: 'Nothing matches' },
      },
      handler: async (req, res, { query }) => {
        if (!query.name && !query.q)
          throw new ValidationError('product.search.term.required', {
            fieldErrors: [{ field: 'name', messageKey: 'product.search.term.required' }],
          });
        const found = await searchProducts(req.em, { name: query.name, q: query.q });
        if (found.length === 0) res.status(204).end();
        else res.json(found);
      },
    },
    {
      method: 'get',
      path: '/api/products/low-stock',
      summary: `Products whose quantity is below the low-stock threshold`,
      tag: TAG,
      access: 'user',
      responses: { 200: { description: 'Low-stock products or a message', schema: lowStockSchema } },
      handler: async (req, res) => {
        const low = await lowStockProducts(req.em, config.lowStockThreshold);
        res.json(low.length > 0 ? low : { message: req.t('product.low.stock.none') });
      },
    },
    {
      method: 'get',
      path: '/api/products/total-stock-value',
      summary: 'Sum of quantity x price over all products, exact to the cent',
      tag: TAG,
      access: 'user',
      responses: { 200: { description: 'Total stock value', schema: envelopeSchema(Joi.number()) } },
      handler: async (req, res) =>
        res.json(envelope(req.t('product.total.value.fetched'), await totalStockValue(req.em))),
    },
    {
      method: 'put',
      path: '/api/products/stock/batch',
      summary: 'Set the quantity of up to 1,000 products, all or nothing',
      tag: TAG,
      access: 'user',
      refusals: {
        404: {
          when: 'Some of the product ids do not exist (nothing is updated)',
          messageKey: 'product.batch.not.found',
        },
      },
      request: { body: stockBatchBody },
      responses: { 200: { description: 'The updated products, in request order', schema: productList } },
      handler: async (req, res, { body }) =>
        res.json(await updateStockBatch(req.em, body.updates, actorName(req))),
    },
    {
      method: 'get',
      path: '/api/products',
      summary: 'Every product (bare array, sorted by id unless asked otherwise)',
      tag: TAG,
      access: 'user',
      stream: 'uncounted',
      request: { query: listQuery },
      responses: { 200: { description: 'Products', schema: productList } },
      handler: async (req, res, { query }) =>
        sendJsonArray(req, res, await lists.open(productListQuery(query), toProductView)),
    },
    {
      method: 'post',
      path: '/api/products',
      summary: 'Create a product (price or purchasePrice; sku generated when absent)',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: { when: 'A product with this name or sku exists', messageKey: 'product.name.duplicate' },
      },
      request: { body: createProductBody },
      responses: { 201: { description: 'Created (bare product, Location header)', schema: productSchema } },
      handler: async (req, res, { body }) => {
        const product = await createProduct(req.em, {
          name: body.name,
          quantity: body.quantity,
          price: body.price ?? body.purchasePrice,
          sku: body.sku,
          category: body.category,
          description: body.description,
        });
        res.status(201).location(`/api/products/${product.id}`).json(product);
      },
    },
    {
      method: 'delete',
      path: '/api/products',
      summary: 'Delete several products, all or nothing',
      tag: TAG,
      access: 'admin',
      refusals: {
        404: {
          when: 'Some of the product ids do not exist (nothing is deleted)',
          messageKey: 'product.bulk.delete.not.found',
        },
      },
      request: { body: bulkDeleteBody },
      responses: { 204: { description: 'Deleted' } },
      handler: async (req, res, { body }) => {
        await deleteProducts(req.em, body.ids);
        res.status(204).end();
      },
    },
    {
      method: 'get',
      path: '/api/products/:id',
      summary: 'One product',
      tag: TAG,
      access: 'user',
      request: { params: productIdParams },
      responses: { 200: { description: 'Product', schema: envelopeSchema(productSchema) } },
      handler: async (req, res, { params }) =>
        res.json(envelope(req.t('product.fetched'), await getProduct(req.em, params.id))),
    },
    {
      method: 'put',
      path: '/api/products/:id',
      summary: 'Partial update: any subset of the create fields',
      tag: TAG,
      access: 'admin',
      refusals: {
        409: { when: 'Another product has this name or sku', messageKey: 'product.name.duplicate' },
      },
      request: { params: productIdParams, body: updateProductBody },
      responses: { 200: { description: 'Updated (bare product)', schema: productSchema } },
      handler: async (req, res, { params, body }) => {
        const { purchasePrice, ...rest } = body;
        res.json(
          await updateProductFields(
            req.em,
            params.id,
            { ...rest, price: rest.price ?? purchasePrice },
            actorName(req),
          ),
        );
      },
    },
    {
      method: 'delete',
      path: '/api/products/:id',
      summary: 'Delete a product',
      tag: TAG,
      access: 'admin',
      request: { params: productIdParams },
      responses: { 200: { description: 'Deleted', schema: envelopeSchema(Joi.valid(null)) } },
      handler: async (req, res, { params }) => {
        await deleteProduct(req.em, params.id);
        res.json(envelope(req.t('product.deleted', { id: params.id }), null));
      },
    },
    {
      method: 'put',
      path: '/api/products/:id/quantity',
      summary: 'Set the quantity (guarded atomic update)',
      tag: TAG,
      access: 'user',
      request: { params: productIdParams, body: quantityBody },
      responses: { 200: { description: 'Updated', schema: envelopeSchema(productSchema) } },
      handler: async (req, res, { params, body }) =>
        res.json(
          envelope(
            req.t('product.quantity.updated'),
            await updateProductQuantity(req.em, params.id, body.quantity, actorName(req)),
          ),
        ),
    },
    {
      method: 'put',
      path: '/api/products/:id/price',
      summary: 'Set the price (`price` or `purchasePrice`)',
      tag: TAG,
      access: 'user',
      request: { params: productIdParams, body: priceBody },
      responses: { 200: { description: 'Updated', schema: envelopeSchema(productSchema) } },
      handler: async (req, res, { params, body }) =>
        res.json(
          envelope(
            req.t('product.price.updated'),
            await updateProductPrice(req.em, params.id, body.price ?? body.purchasePrice),
          ),
        ),
    },
    {
      method: 'put',
      path: '/api/products/:id/name',
      summary: 'Rename a product (unique case-insensitively)',
      tag: TAG,
      access: 'user',
      refusals: {
        409: { when: 'Another product has this name', messageKey: 'product.name.duplicate' },
      },
      request: { params: productIdParams, body: nameBody },
      responses: { 200: { description: 'Updated', schema: envelopeSchema(productSchema) } },
      handler: async (req, res, { params, body }) =>
        res.json(envelope(req.t('product.name.updated'), await renameProduct(req.em, params.id, body.name))),
    },
  ]).map(route => ({ ...route, errorStyle: 'product' as const }));
