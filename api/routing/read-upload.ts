import type { Request } from 'express';
import busboy from 'busboy';
import { AppError, UnsupportedMediaTypeError, ValidationError } from '../../domain/shared/errors.js';

const tooLarge = (maxBytes: number) =>
  new AppError('payload_too_large', 413, 'csv.import.too.large', { params: { max: maxBytes / 1024 / 1024 } });

/** Bodies taken as the file itself (a CSV sent as is). */
const RAW_TYPES = [
  'text/csv',
  'application/csv',
  'text/plain',
  'application/vnd.ms-excel',
  'application/octet-stream',
];

/** A body that breaks off, or a form busboy cannot parse: 400, never an unhandled stream error. */
const malformed = () => new ValidationError('csv.import.upload.malformed');

/**
 * Listens on the request itself: a client that aborts mid-body ends the read with `malformed` (the promise
 * settles once, whichever of error/close comes first).
 */
function onAborted(req: Request, fail: (error: Error) => void): void {
  req.once('error', () => fail(malformed()));
  req.once('close', () => {
    if (!req.complete) fail(malformed());
  });
}

function readRaw(req: Request, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge(maxBytes));
      } else chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    onAborted(req, reject);
  });
}

function readMultipartFile(req: Request, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: maxBytes, files: 1 } });
    } catch {
      reject(malformed());
      return;
    }
    let file: Buffer | undefined;
    let failure: Error | undefined;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      // Stop feeding the parser and let the rest of the body drain, so the error answer can be sent.
      req.unpipe(parser);
      req.resume();
      reject(error);
    };
    parser.on('file', (field, stream) => {
      // busboy emits the parser's error on the open file stream too (a form that ends mid-part).
      stream.on('error', () => fail(malformed()));
      if (field !== 'file') {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => (failure = tooLarge(maxBytes)));
      stream.on('end', () => (file = Buffer.concat(chunks)));
    });
    parser.on('error', () => fail(malformed()));
    parser.on('close', () => {
      if (failure) fail(failure);
      else if (!file) fail(new ValidationError('csv.import.file.required'));
      else if (!settled) {
        settled = true;
        resolve(file);
      }
    });
    onAborted(req, fail);
    req.pipe(parser);
  });
}

/**
 * The uploaded file of an import: a CSV body as is, or the `file` part of a multipart form. Larger than
 * `maxBytes`: 413 without reading the rest into memory; a body that breaks off or a malformed form: 400; any
 * other content type: 415.
 */
export async function readUploadedFile(req: Request, maxBytes: number): Promise<Buffer> {
  const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) throw tooLarge(maxBytes);
  if (type === 'multipart/form-data') return readMultipartFile(req, maxBytes);
  if (RAW_TYPES.includes(type)) return readRaw(req, maxBytes);
  throw new UnsupportedMediaTypeError('csv.import.content.type');
}
