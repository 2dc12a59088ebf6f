import { createRequire } from 'node:module';
import type Joi from 'joi';
import type { RouteDefinition } from '../routing/route-definition.js';

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
      result.push({ name, in: where, required: where === 'path' || required.has(name), schema: property });
    }
  }
  return result;
}

function errorResponse(route: RouteDefinition) {
  const ref = route.errorStyle === 'product' ? 'ProductErrorBody' : 'ErrorBody';
  const anyOf =
    route.errorStyle === 'product'
      ? [{ $ref: `#/components/schemas/${ref}` }]
      : [{ $ref: '#/components/schemas/ErrorBody' }, { $ref: '#/components/schemas/PagingErrorBody' }];
  return { description: 'Error', content: { 'application/json': { schema: { anyOf } } } };
}

const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer', minimum: 1 },
  },
};

/** The documented refusals that tell the client when to come back (Retry-After). */
function retryLaterResponses(route: RouteDefinition): Record<string, JsonSchema> {
  const retryLater = (description: string) => ({
    ...errorResponse(route),
    description,
    headers: RETRY_AFTER,
  });
  const responses: Record<string, JsonSchema> = {};
  if (route.stream === 'counted')
    responses['429'] = retryLater('Too many streams of this user (STREAMS_PER_USER) at once');
  if (route.stream)
    responses['503'] = retryLater(
      'No database connection free for a stream, or no disk room to spool the answer',
    );
  if (route.method !== 'get')
    responses['503'] = retryLater(
      'A row lock was not had within LOCK_TIMEOUT_MS, the statement timed out, or the database is away',
    );
  return responses;
}

/** The OpenAPI 3.1 document, generated from the same route definitions that validate requests. */
export function buildOpenApi(
  routes: RouteDefinition[],
  info: { title: string; version: string },
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes.filter(r => !r.internal)) {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = spec.schema
        ? {
            description: spec.description,
            content: { [spec.contentType ?? 'application/json']: { schema: toJsonSchema(spec.schema) } },
          }
        : { description: spec.description };
      if (spec.headers)
        responses[status].headers = Object.fromEntries(
          Object.entries(spec.headers).map(([name, description]) => [
            name,
            { description, schema: { type: 'string' } },
          ]),
        );
    }
    for (const [status, response] of Object.entries(retryLaterResponses(route)))
      responses[status] ??= response;
    responses.default = errorResponse(route);
    const operation: JsonSchema = {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      parameters: parameters(route),
      responses,
      'x-access': route.access,
      ...(route.demoRead ? { 'x-demo-read': true } : {}),
      ...(route.access === 'public' ? { security: [] } : {}),
    };
    if (route.request?.body)
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: toJsonSchema(route.request.body) } },
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
