import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';

/** Used when an app does not set `app.locals.streamIdleTimeoutMs` (the contract's default). */
const DEFAULT_IDLE_TIMEOUT_MS = 30000;

/** Who a counted stream belongs to: the signed-in user, else the client address (anonymous demo reads). */
export const streamOwner = (req: Request): string =>
  req.actor ? `user:${req.actor.userId}` : `ip:${req.ip ?? 'unknown'}`;

/** A client that took no data for the idle timeout while the response had some waiting for it. */
class StalledReaderError extends Error {
  constructor(idleMs: number) {
    super(`the client took no data for ${idleMs} ms`);
    this.name = 'StalledReaderError';
  }
}

/** Batches of rows -> the text of one JSON array, written as the batches arrive. */
function jsonArray(): Transform {
  let first = true;
  return new Transform({
    writableObjectMode: true,
    transform(batch: unknown[], _encoding, done) {
      const parts = batch.map(row => JSON.stringify(row));
      const text = (first ? '[' : ',') + parts.join(',');
      first = false;
      done(null, text);
    },
    flush(done) {
      done(null, first ? '[]' : ']');
    },
  });
}

/**
 * The response as the last step of a pipeline. A chunk the response cannot take at once (its buffer is full
 * because the client does not read) waits for `drain`; if none comes within `idleMs` the step fails with a
 * StalledReaderError, so the pipeline tears down and the source releases its database connection. A response
 * closed early (the client went away) fails the step too.
 */
function responseStep(res: Response, idleMs: number): Writable {
  const nothing = () => undefined;
  let stopWaiting: () => void = nothing;
  const onClose = () => {
    if (!res.writableFinished)
      step.destroy(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
  };
  const step = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, encoding, done) {
      if (typeof chunk === 'string' ? res.write(chunk, encoding) : res.write(chunk)) return done();
      const timer = setTimeout(() => {
        stopWaiting();
        done(new StalledReaderError(idleMs));
      }, idleMs);
      const onDrain = () => {
        stopWaiting();
        done();
      };
      stopWaiting = () => {
        clearTimeout(timer);
        res.off('drain', onDrain);
        stopWaiting = nothing;
      };
      res.on('drain', onDrain);
    },
    final(done) {
      // No callback to `end`: express-session wraps `res.end` and takes a function argument for a body chunk
      // (its write throws, and the response is destroyed without its last chunk). `finish` says the same.
      res.once('finish', () => done());
      res.end();
    },
    destroy(error, done) {
      stopWaiting();
      res.off('close', onClose);
      done(error);
    },
  });
  res.on('close', onClose);
  return step;
}

/**
 * Pipes `source` to the response with backpressure: a slow client slows the cursor, a client that goes away
 * destroys the source (the query stops and its connection is released), and a client that takes no data for
 * `app.locals.streamIdleTimeoutMs` (STREAM_IDLE_TIMEOUT_MS) is cut: its socket is destroyed, so it sees a
 * truncated transfer. A failure after the status line has been sent can only cut the response short.
 */
export async function sendStream(req: Request, res: Response, source: Readable, ...steps: Transform[]) {
  const idleMs = (req.app.locals.streamIdleTimeoutMs as number | undefined) ?? DEFAULT_IDLE_TIMEOUT_MS;
  try {
    await pipeline([source, ...steps, responseStep(res, idleMs)]);
  } catch (error) {
    source.destroy();
    if (error instanceof StalledReaderError) {
      req.log.info({ correlationId: req.correlationId, idleMs }, 'stalled reader cut');
      // A reset, not a close: the kernel drops what the client never took instead of holding it (up to a
      // few MB per socket) while it keeps offering it to a zero window.
      if (res.socket && !res.socket.destroyed) res.socket.resetAndDestroy();
    } else if ((error as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE')
      req.log.warn({ err: error, correlationId: req.correlationId }, 'streamed response failed');
    res.destroy();
  }
}

/**
 * A JSON array answered from a row stream: the same bytes `res.json(rows)` would send, without ever holding
 * more than one batch of rows.
 */
export async function sendJsonArray(req: Request, res: Response, source: Readable): Promise<void> {
  res.status(200).type('application/json');
  await sendStream(req, res, source, jsonArray());
}
