/** Query keys whose values are credentials or one-time secrets (OAuth code/state, tokens, passwords, keys). */
const SENSITIVE_KEY =
  /^(?:code|state|nonce|ticket|session|sid|sig|signature|code_verifier)$|token|secret|passw|pwd|api[-_]?key|credential|assertion|jwt/i;

/**
 * What every key SENSITIVE_KEY matches holds as written, before decoding (or it holds a %-escape): a query
 * without any of these has nothing to redact, and most queries are kept without being taken apart.
 */
const MAYBE_SENSITIVE =
  /%|code|state|nonce|ticket|session|sid|sig|token|secret|passw|pwd|api|credential|assertion|jwt/i;

export const REDACTED = '[Redacted]';

function decodedKey(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * A request URL fit for a log line: the value of every sensitive query parameter is replaced by `[Redacted]`,
 * everything else is kept byte for byte (the key is matched decoded, so `acc%65ss_token` is caught too).
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  if (!MAYBE_SENSITIVE.test(query)) return url;
  const redacted = query
    .split('&')
    .map(pair => {
      const eq = pair.indexOf('=');
      const key = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && SENSITIVE_KEY.test(decodedKey(key).trim()) ? `${key}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${redacted}`;
}
