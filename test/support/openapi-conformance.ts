import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Response } from 'supertest';

type Doc = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** Unknown paths answer in their family's error shape: the product envelope under /api/products. */
const unknownPathError = (path: string) =>
  /^\/api\/(products(\/|$)|auth\/login$)/.test(path) ? 'ProductErrorBody' : 'ErrorBody';

/** Validates responses against the generated OpenAPI 3.1 document, so docs and code cannot drift. */
export class OpenApiConformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly templates: { regex: RegExp; template: string }[];
  private readonly cache = new Map<string, ReturnType<Ajv2020['compile']>>();
  /** `operationId status` of every answer checked so far. */
  readonly seen = new Set<string>();
  private readonly watchers = new Set<(pair: string) => void>();

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    this.templates = Object.keys(doc.paths)
      .map(template => ({
        template,
        regex: new RegExp(
          `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
        ),
      }))
      // Literal segments win over parameters (`/api/inventory/count` before `/api/inventory/{id}`).
      .sort(
        (a, b) => b.template.replace(/\{[^}]+\}/g, '').length - a.template.replace(/\{[^}]+\}/g, '').length,
      );
  }

  /** Calls `watcher` with `operationId status` of every documented answer from now on; answers the unwatch. */
  watch(watcher: (pair: string) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private operation(method: string, path: string): Doc | undefined {
    for (const { regex, template } of this.templates) {
      const op = regex.test(path) ? this.doc.paths[template][method.toLowerCase()] : undefined;
      if (op) return op;
    }
    return undefined;
  }

  /** Throws with a readable message when the response does not match its documented schema. */
  check(method: string, url: string, res: Response): void {
    // Express routing is not strict: `/api/products/` is served by `/api/products`.
    const path = new URL(url, 'http://x').pathname.replace(/(.)\/$/, '$1');
    if (path === '/api/openapi.json' || path.startsWith('/api/docs') || path === '/metrics') return;
    if (path.startsWith('/admin/queues')) return;
    const op = this.operation(method, path);
    const status = String(res.status);
    // Every status an operation answers is listed for it: there is no `default` to fall back on.
    const response = op?.responses[status];
    if (op && !response) throw new Error(`${method} ${path}: status ${status} is not documented`);
    if (op) {
      this.seen.add(`${op.operationId} ${status}`);
      for (const watcher of this.watchers) watcher(`${op.operationId} ${status}`);
    }
    const schema =
      response?.content?.['application/json']?.schema ??
      (op
        ? undefined
        : res.status >= 400
          ? { $ref: `#/components/schemas/${unknownPathError(path)}` }
          : undefined);
    if (!op && res.status < 400 && res.status !== 302)
      throw new Error(`${method} ${path}: undocumented route answered ${status}`);
    if (!schema) return;
    if (!(res.headers['content-type'] ?? '').includes('application/json'))
      throw new Error(`${method} ${path}: expected a JSON body, got ${res.headers['content-type']}`);
    const key = `${method} ${op?.operationId ?? unknownPathError(path)} ${status}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile({ ...schema, components: this.doc.components });
      this.cache.set(key, validate);
    }
    if (!validate(res.body))
      throw new Error(
        `${method} ${path} ${status} does not match the OpenAPI document: ${this.ajv.errorsText(validate.errors)}\n` +
          JSON.stringify(res.body).slice(0, 500),
      );
  }
}
