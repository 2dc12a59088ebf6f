import { createRequire } from 'node:module';
import type Joi from 'joi';
import type { ResponseSpec, RouteDefinition } from '../routing/route-definition.js';
import { errorStatuses, type ErrorStatus } from './operation-statuses.js';
import { exampleOf } from './example-of.js';

/** A message key in English (the examples' language). */
export type Translate = (messageKey: string) => string;

type JsonSchema = Record<string, any>;
type Parse = (schema: Joi.Schema, mode: string) => unknown;
// joi-to-json is CommonJS with `module.exports = parse`; loaded when a document is first built.
let parse: Parse | undefined;

const toJsonSchema = (schema: Joi.Schema): JsonSchema =>
  (parse ??= createRequire(import.meta.url)('joi-to-json') as Parse)(schema, 'open-api-3.1') as JsonSchema;

/** `/api/inventory/:id` -> `/api/inventory/{id}` */
export const openApiPath = (expressPath: string) => expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const ERROR_SCHEMAS: Record<string, JsonSchema> = {
  ErrorBody: {
    type: 'object',
    required: ['error', 'message', 'status', 'timestamp', 'path', 'correlationId'],
    properties: {
      error: { type: 'string' },
      message: { type: 'string' },
      status: { type: 'integer' },
      timestamp: { type: 'string', format: 'date-time' },
      path: { type: 'string' },
      correlationId: { type: 'string' },
      messageKey: { type: 'string' },
      fieldErrors: { type: 'object', additionalProperties: { type: 'string' } },
      details: {},
    },
    additionalProperties: false,
  },
  PagingErrorBody: {
    type: 'object',
    required: ['error', 'message', 'timestamp', 'correlationId'],
    properties: {
      error: { type: 'string', const: 'bad_request' },
      message: { type: 'string' },
      timestamp: { type: 'string', format: 'date-time' },
      correlationId: { type: 'string' },
    },
    additionalProperties: false,
  },
  ProductErrorBody: {
    type: 'object',
    required: ['success', 'message', 'data', 'error', 'status', 'timestamp', 'path', 'correlationId'],
    properties: {
      success: { type: 'boolean', const: false },
      message: { type: 'string' },
      data: { anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: { type: 'string' } }] },
      error: { type: 'string' },
      status: { type: 'integer' },
      timestamp: { type: 'string', format: 'date-time' },
      path: { type: 'string' },
      correlationId: { type: 'string' },
      details: {},
    },
    additionalProperties: false,
  },
};

function parameters(route: RouteDefinition): JsonSchema[] {
  const result: JsonSchema[] = [];
  for (const where of ['path', 'query'] as const) {
    const schema = where === 'path' ? route.request?.params : route.request?.query;
    if (!schema) continue;
    const json = toJsonSchema(schema);
    const required = new Set<string>(json.required ?? []);
    for (const [name, property] of Object.entries<JsonSchema>(json.properties ?? {})) {
      const isRequired = where === 'path' || required.has(name);
      result.push({
        name,
        in: where,
        required: isRequired,
        schema: property,
        ...(isRequired ? { example: exampleOf(property) } : {}),
      });
    }
  }
  return result;
}

const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer', minimum: 1 },
  },
};

/** Fixed values of the examples, so the document is the same on every build. */
const EXAMPLE_TIME = '2026-01-01T12:00:00.000Z';
const EXAMPLE_CORRELATION_ID = 'SR-1767268800000-0042';

/** An error answer of the route's family: its schema and an example in English. */
function errorResponse(route: RouteDefinition, spec: ErrorStatus, translate: Translate): JsonSchema {
  const path = openApiPath(route.path);
  const message = translate(spec.messageKey);
  const common = { error: spec.error, message, status: spec.status, timestamp: EXAMPLE_TIME, path };
  const product = route.errorStyle === 'product';
  const schema = product
    ? { $ref: '#/components/schemas/ProductErrorBody' }
    : spec.paging
      ? {
          anyOf: [
            { $ref: '#/components/schemas/ErrorBody' },
            { $ref: '#/components/schemas/PagingErrorBody' },
          ],
        }
      : { $ref: '#/components/schemas/ErrorBody' };
  const example = product
    ? { success: false, data: null, ...common, correlationId: EXAMPLE_CORRELATION_ID }
    : { ...common, correlationId: EXAMPLE_CORRELATION_ID, messageKey: spec.messageKey };
  return {
    description: spec.when,
    content: { 'application/json': { schema, example } },
    ...(spec.retryAfter ? { headers: RETRY_AFTER } : {}),
  };
}

/** The route's own answers (success, and any error it answers itself), each with its schema and an example. */
function ownResponse(spec: ResponseSpec): JsonSchema {
  const response: JsonSchema = { description: spec.description };
  if (spec.schema) {
    const schema = toJsonSchema(spec.schema);
    response.content = { [spec.contentType ?? 'application/json']: { schema, example: exampleOf(schema) } };
  } else if (spec.contentType) response.content = { [spec.contentType]: { schema: { type: 'string' } } };
  if (spec.headers)
    response.headers = Object.fromEntries(
      Object.entries(spec.headers).map(([name, description]) => [
        name,
        { description, schema: { type: 'string' } },
      ]),
    );
  return response;
}

/**
 * The OpenAPI 3.1 document, generated from the same route definitions that validate requests: every status an
 * operation can answer (operation-statuses.ts), each with its body schema and an example (messages in English).
 */
export function buildOpenApi(
  routes: RouteDefinition[],
  info: { title: string; version: string },
  translate: Translate = key => key,
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes.filter(r => !r.internal)) {
    const responses: Record<string, JsonSchema> = {};
    for (const spec of errorStatuses(route)) responses[spec.status] = errorResponse(route, spec, translate);
    for (const [status, spec] of Object.entries(route.responses)) responses[status] = ownResponse(spec);
    const operation: JsonSchema = {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      parameters: parameters(route),
      responses,
      'x-access': route.access,
      ...(route.demoRead ? { 'x-demo-read': true } : {}),
      ...(route.allowedInDemo ? { 'x-allowed-in-demo': true } : {}),
      ...(route.access === 'public' ? { security: [] } : {}),
    };
    const body = route.request?.body && toJsonSchema(route.request.body);
    if (body)
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: body, example: exampleOf(body, 0, true) } },
      };
    const upload = route.request?.upload;
    if (upload)
      operation.requestBody = {
        required: true,
        description: upload.description,
        content: Object.fromEntries(
          upload.contentTypes.map(type => [
            type,
            {
              schema:
                type === 'multipart/form-data'
                  ? {
                      type: 'object',
                      required: ['file'],
                      properties: { file: { type: 'string', contentMediaType: 'text/csv' } },
                    }
                  : { type: 'string' },
            },
          ]),
        ),
      };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      ...info,
      description: 'Stockroom: inventory, supplier, stock history, analytics and product API.',
    },
    paths,
    components: {
      schemas: ERROR_SCHEMAS,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        session: { type: 'apiKey', in: 'cookie', name: 'SESSION' },
      },
    },
    security: [{ bearer: [] }, { session: [] }],
  };
}
