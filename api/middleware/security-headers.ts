import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

type HeaderMiddleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * The headers a helmet middleware sets, worked out once: helmet reads nothing of the request, so it runs once
 * against a recording response and every request gets the recorded headers set in one loop, instead of
 * twelve middleware calls per request.
 */
function recordedHeaders(middleware: HeaderMiddleware, extra: Record<string, string> = {}): RequestHandler {
  const headers = new Map<string, string>(Object.entries(extra));
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers.set(name, String(value));
    },
    removeHeader: (name: string) => {
      headers.delete(name);
      removed.push(name);
    },
  };
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, () => undefined);
  const pairs = [...headers];
  return (_req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of pairs) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}

/**
 * The Content-Security-Policy of the API's answers (JSON, CSV, redirects; OWASP REST Security Cheat Sheet):
 * nothing may load from them and nothing may frame them. helmet's default policy is written for HTML pages
 * (their own scripts, styles, fonts and images), ~300 characters on every answer; the routes that serve pages
 * set it themselves (pageSecurityPolicy).
 */
export const API_CONTENT_SECURITY_POLICY: HelmetOptions['contentSecurityPolicy'] = {
  useDefaults: false,
  directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
};

/**
 * helmet's headers that only mean something for an HTML document (process isolation, DNS prefetching of its
 * links, old browsers' download and XSS handling, Flash and PDF policies): left off the API's JSON and CSV
 * answers, as the OWASP REST Security Cheat Sheet lists them, and sent with the pages (pageSecurityPolicy).
 */
export const DOCUMENT_ONLY_HEADERS_OFF = {
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
} as const satisfies HelmetOptions;

/** helmet's response headers on every answer, and `extra` headers that are the same on every answer. */
export const securityHeaders = (options: HelmetOptions, extra: Record<string, string> = {}): RequestHandler =>
  recordedHeaders(helmet(options), extra);

/**
 * helmet's defaults for the routes that serve HTML pages (Swagger UI, bull-board): its default
 * Content-Security-Policy and the document-only headers the API's answers leave off.
 */
export const pageSecurityPolicy = (): RequestHandler => recordedHeaders(helmet());
