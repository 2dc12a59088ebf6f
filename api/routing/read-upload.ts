import { Readable } from 'node:stream';
import type { Request } from 'express';
import busboy from 'busboy';
import type { AnswerSpool, SpooledAnswer } from '../../domain/shared/answer-spool.js';
import { AppError, UnsupportedMediaTypeError, ValidationError } from '../../domain/shared/errors.js';

const MB = 1024 * 1024;

const tooLarge = (maxBytes: number) =>
  new AppError('payload_too_large', 413, 'csv.import.too.large', {
    params: { max: Math.round((maxBytes / MB) * 100) / 100 },
  });

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

/** The chunks of `stream` with backpressure; leaving early (an error) does not destroy it (see `drain`). */
const chunksOf = (stream: Readable): AsyncIterable<Buffer> => stream.iterator({ destroyOnReturn: false });

/** Lets the rest of a refused body drain, so the error answer can be sent on the same connection. */
const drain = (req: Request) => {
  req.unpipe();
  req.resume();
};

async function* rawFile(req: Request, maxBytes: number): AsyncGenerator<Buffer> {
  let size = 0;
  let read = false;
  try {
    for await (const chunk of chunksOf(req)) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge(maxBytes);
      yield chunk;
    }
    read = req.complete;
  } catch (error) {
    throw error instanceof AppError ? error : malformed();
  } finally {
    // Refused, broken off, or given up by the reader (storage failed): the rest is not read.
    if (!read) drain(req);
  }
  if (!read) throw malformed();
}

/** The busboy parser's progress: the `file` part's stream once it starts, and the end of the form. */
interface Form {
  file: Promise<Readable | undefined>;
  closed: Promise<void>;
  failed: () => Error | undefined;
}

function parseForm(req: Request, maxBytes: number): Form {
  let parser: busboy.Busboy;
  try {
    // busboy marks a file truncated once it reaches `fileSize`: one byte more than a file may have.
    parser = busboy({ headers: req.headers, limits: { fileSize: maxBytes + 1, files: 1 } });
  } catch {
    const failure = Promise.reject(malformed());
    failure.catch(() => undefined);
    return { file: Promise.resolve(undefined), closed: failure, failed: () => malformed() };
  }
  let failure: Error | undefined;
  let part: Readable | undefined;
  let settleFile: (file: Readable | undefined) => void = () => undefined;
  const file = new Promise<Readable | undefined>(resolve => (settleFile = resolve));
  let failClosed: (error: Error) => void = () => undefined;
  const closed = new Promise<void>((resolve, reject) => {
    parser.once('close', resolve);
    failClosed = reject;
  });
  closed.catch(() => undefined);
  const fail = () => {
    failure ??= malformed();
    part?.destroy(failure);
    failClosed(failure);
    settleFile(undefined);
  };
  parser.on('file', (field, stream) => {
    // busboy emits the parser's error on the open file stream too (a form that ends mid-part).
    stream.on('error', fail);
    if (field !== 'file') stream.resume();
    else settleFile((part = stream));
  });
  parser.on('error', fail);
  parser.once('close', () => settleFile(undefined));
  // A client that aborts mid-body: the read ends with `malformed`.
  req.once('error', fail);
  req.once('close', () => {
    if (!req.complete) fail();
  });
  req.pipe(parser);
  return { file, closed, failed: () => failure };
}

async function* multipartFile(req: Request, maxBytes: number): AsyncGenerator<Buffer> {
  const form = parseForm(req, maxBytes);
  let read = false;
  try {
    const part = await form.file;
    if (part) {
      for await (const chunk of chunksOf(part)) yield chunk;
      if ((part as Readable & { truncated?: boolean }).truncated) throw tooLarge(maxBytes);
    }
    await form.closed;
    read = true;
    if (!part) throw new ValidationError('csv.import.file.required');
  } catch (error) {
    throw error instanceof AppError ? error : (form.failed() ?? malformed());
  } finally {
    if (!read) drain(req);
  }
}

/**
 * The uploaded file of an import, read as it arrives (never held whole): a CSV body as is, or the `file` part
 * of a multipart form. Any other content type, or a declared length beyond `maxBytes`: 415 or 413 at once.
 * While it is read: more than `maxBytes` is 413 (the rest of the body is drained, not kept); a body that breaks
 * off or a malformed form is 400.
 */
export function uploadedFile(req: Request, maxBytes: number): AsyncIterable<Buffer> {
  const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) throw tooLarge(maxBytes);
  if (type === 'multipart/form-data') return multipartFile(req, maxBytes);
  if (RAW_TYPES.includes(type)) return rawFile(req, maxBytes);
  throw new UnsupportedMediaTypeError('csv.import.content.type');
}

/**
 * The uploaded file, received whole into a file of the process's spool at the client's pace before anything
 * else happens: a slow or stalled uploader holds a file, never a database connection. The caller reads it
 * (`parts()`, at the disk's speed) and discards it when done.
 */
export async function spooledUpload(
  req: Request,
  maxBytes: number,
  spool: AnswerSpool,
): Promise<SpooledAnswer> {
  return spool.fill(Readable.from(uploadedFile(req, maxBytes)), []);
}
