import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';

/** Deepest nesting of arrays and objects a JSON body may have (real bodies nest 3 levels at most). */
export const MAX_JSON_DEPTH = 32;
export const MAX_JSON_BYTES = '1mb';

/** A body refused before parsing; the error handler maps `type` to a 400 in the route family's shape. */
class BodyRefused extends Error {
  constructor(
    readonly type: 'entity.too.deep' | 'entity.encoding.invalid' | 'charset.unsupported',
    readonly status = 400,
  ) {
    super(type);
  }
}

/** The body as UTF-8 bytes: UTF-8 as it is (strictly valid), UTF-16 decoded strictly; other charsets 415. */
function utf8Bytes(buffer: Buffer, encoding: string): Uint8Array {
  const charset = encoding.toLowerCase();
  if (charset === 'utf-8' || charset === 'utf8') {
    if (!isUtf8(buffer)) throw new BodyRefused('entity.encoding.invalid');
    return buffer;
  }
  if (charset !== 'utf-16le' && charset !== 'utf-16be' && charset !== 'utf-16')
    throw new BodyRefused('charset.unsupported', 415);
  try {
    return Buffer.from(new TextDecoder(charset, { fatal: true }).decode(buffer), 'utf8');
  } catch {
    throw new BodyRefused('entity.encoding.invalid');
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * The deepest bracket nesting of a JSON text, counted on the raw bytes in one pass without recursion
 * (brackets inside strings do not count; UTF-8 continuation bytes never equal an ASCII byte). Stops counting
 * as soon as `limit` is exceeded.
 */
export function exceedsJsonDepth(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
  }
  return false;
}

/**
 * JSON bodies of writes: at most MAX_JSON_BYTES, strictly valid UTF-8 (a malformed sequence is a 400, never silently replaced by
 * U+FFFD and stored) and at most MAX_JSON_DEPTH levels deep, both checked on the raw bytes before JSON.parse,
 * so nothing downstream (validation, error rendering, idempotency hashing) ever walks a deep value.
 */
export function jsonBody(): RequestHandler {
  const parse = express.json({
    limit: MAX_JSON_BYTES,
    verify: (_req: IncomingMessage, _res, buffer: Buffer, encoding: string) => {
      if (exceedsJsonDepth(utf8Bytes(buffer, encoding), MAX_JSON_DEPTH))
        throw new BodyRefused('entity.too.deep');
    },
  });
  // A request without a body (body-parser's own test: no Content-Length, no Transfer-Encoding) skips the
  // parser, which would otherwise still add `req.body = undefined` to every GET.
  // A read takes no body: one sent with it is not read (nor refused).
  return (req, res, next) =>
    (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) ||
    req.method === 'GET' ||
    req.method === 'HEAD'
      ? next()
      : parse(req, res, next);
}
