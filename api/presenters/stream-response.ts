import { Transform, type Readable } from 'node:stream';
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

/** The error of a response closed before it was finished (the client went away), as streams name it. */
const prematureClose = () =>
  Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

/**
 * Bytes read from a spooled answer's file per write to the response, into one buffer reused for every write (no
 * buffer per read waiting for a collection outside the JavaScript heap). A client must take this much within
 * the idle timeout, as it had to take a file stream's read before.
 */
const RESPONSE_PART_BYTES = 64 * 1024;

/**
 * Writes `part` to the response and resolves once the socket has taken all of it (the caller may then reuse
 * the part's buffer). Fails with a StalledReaderError if that takes longer than `idleMs` (the client takes no
 * data), or as a premature close if the response closes first.
 */
function writePart(res: Response, part: Buffer, idleMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      res.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onClose = () => settle(prematureClose());
    const timer = setTimeout(() => settle(new StalledReaderError(idleMs)), idleMs);
    res.on('close', onClose);
    // A write fails only when the client's connection did (reset, or destroyed): that client went away.
    res.write(part, error => settle(error ? prematureClose() : undefined));
  });
}

/** Ends the response; resolves once it is finished, fails as a premature close if it closes first. */
function endResponse(res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    const onClose = () => {
      if (!res.writableFinished) reject(prematureClose());
    };
    res.once('close', onClose);
    res.once('finish', () => {
      res.off('close', onClose);
      resolve();
    });
    // No callback to `end`: express-session wraps `res.end` and takes a function argument for a body chunk
    // (its write throws, and the response is destroyed without its last chunk). `finish` says the same.
    res.end();
  });
}

/**
 * Answers `source` (through `steps`) in two phases, so that no database connection ever waits for a client.
 * First the whole answer is read into a file of the process's AnswerSpool (`app.locals.spool`) at the speed
 * PostgreSQL and the disk allow; the source then ends and releases its connection. A failure in this phase
 * (the query, or the spool's disk budget: 503 with Retry-After) is answered as an error, since nothing has
 * been sent yet, and a client that goes away stops it. Then `head` sets the status and headers and the file
 * is written to the response a part at a time (writePart), each once the socket took the previous one; a
 * client that takes no part within `app.locals.streamIdleTimeoutMs`
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
  const parts = answer.parts(RESPONSE_PART_BYTES);
  try {
    for await (const part of parts) await writePart(res, part, idleMs);
    await endResponse(res);
  } catch (error) {
    await parts.return(undefined);
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
