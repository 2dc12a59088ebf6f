import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import type { AnswerSpool } from '../../domain/shared/answer-spool.js';
import type { StreamOwner } from '../../domain/shared/row-stream.js';

/** Used when an app does not set `app.locals.streamIdleTimeoutMs` (the contract's default). */
const DEFAULT_IDLE_TIMEOUT_MS = 30000;

/**
 * Who a counted stream belongs to: the signed-in user, else the client address (anonymous demo reads). Its
 * slot is held until the response is over (sent, failed or its client gone).
 */
export const streamOwner = (req: Request, res: Response): StreamOwner => ({
  key: req.actor ? `user:${req.actor.userId}` : `ip:${req.ip ?? 'unknown'}`,
  whenDone: release => res.once('close', release),
});

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
 * StalledReaderError, so the pipeline tears down and the spooled file is deleted. A response closed early
 * (the client went away) fails the step too.
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
 * Answers `source` (through `steps`) in two phases, so that no database connection ever waits for a client.
 * First the whole answer is read into a file of the process's AnswerSpool (`app.locals.spool`) at the speed
 * PostgreSQL and the disk allow; the source then ends and releases its connection. A failure in this phase
 * (the query, or the spool's disk budget: 503 with Retry-After) is answered as an error, since nothing has
 * been sent yet, and a client that goes away stops it. Then `head` sets the status and headers and the file
 * is piped to the response with backpressure; a client that takes no data for `app.locals.streamIdleTimeoutMs`
 * (STREAM_IDLE_TIMEOUT_MS) is cut: its socket is destroyed, so it sees a truncated transfer. The file is
 * deleted when the response ends, however it ends.
 */
export async function sendStream(
  req: Request,
  res: Response,
  head: () => void,
  source: Readable,
  ...steps: Transform[]
) {
  const idleMs = (req.app.locals.streamIdleTimeoutMs as number | undefined) ?? DEFAULT_IDLE_TIMEOUT_MS;
  const spool = req.app.locals.spool as AnswerSpool;
  const gone = new AbortController();
  const onGone = () => gone.abort();
  res.once('close', onGone);
  let answer;
  try {
    answer = await spool.fill(source, steps, gone.signal);
  } catch (error) {
    if (gone.signal.aborted) return;
    throw error;
  } finally {
    res.off('close', onGone);
  }
  if (gone.signal.aborted) return answer.discard();
  head();
  const file = answer.reader();
  try {
    await pipeline([file, responseStep(res, idleMs)]);
  } catch (error) {
    file.destroy();
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
  await sendStream(req, res, () => res.status(200).type('application/json'), source, jsonArray());
}
