import type { Request } from 'express';
import busboy from 'busboy';
import { AppError, ValidationError } from '../../domain/shared/errors.js';

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
    req.once('error', reject);
  });
}

function readMultipartFile(req: Request, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: maxBytes, files: 1 } });
    } catch {
      reject(new ValidationError('csv.import.file.required'));
      return;
    }
    let file: Buffer | undefined;
    let failure: Error | undefined;
    parser.on('file', (field, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => (failure = tooLarge(maxBytes)));
      stream.on('end', () => {
        if (field === 'file') file = Buffer.concat(chunks);
      });
    });
    parser.on('error', () => reject(new ValidationError('csv.import.file.required')));
    parser.on('close', () => {
      if (failure) reject(failure);
      else if (!file) reject(new ValidationError('csv.import.file.required'));
      else resolve(file);
    });
    req.pipe(parser);
  });
}

/**
 * The uploaded file of an import: a CSV body as is, or the `file` part of a multipart form. Larger than
 * `maxBytes`: 413 without reading the rest into memory; any other content type: 415.
 */
export async function readUploadedFile(req: Request, maxBytes: number): Promise<Buffer> {
  const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) throw tooLarge(maxBytes);
  if (type === 'multipart/form-data') return readMultipartFile(req, maxBytes);
  if (RAW_TYPES.includes(type)) return readRaw(req, maxBytes);
  throw new AppError('bad_request', 415, 'csv.import.content.type');
}
