import type { Config } from '../../config/env.js';

/** Origins a browser may be sent back to after login or logout: the front end and every CORS origin. */
export const returnOrigins = (config: Config): Set<string> =>
  new Set([new URL(config.frontendUrl).origin, ...config.corsOrigins]);

/**
 * A `return` parameter, honoured only when it is an absolute http(s) URL that starts with an allowed origin
 * (no open redirect: look-alike hosts, userinfo tricks, backslashes and other schemes are ignored).
 * Returns the normalized URL, or undefined when it is not acceptable.
 */
export function allowedReturnUrl(config: Config, value: unknown): URL | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password) return undefined;
  if (!returnOrigins(config).has(url.origin)) return undefined;
  if (value !== url.origin && !value.startsWith(`${url.origin}/`)) return undefined;
  return url;
}

/** `{return or FRONTEND_URL}` without a trailing slash, query or fragment: the base to append `/auth` to. */
export function returnBase(config: Config, value: unknown): string {
  const url = allowedReturnUrl(config, value);
  if (!url) return config.frontendUrl;
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
