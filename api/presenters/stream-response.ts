import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';

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
 * Pipes `source` to the response with backpressure: a slow client slows the cursor, a client that goes away
 * destroys the source (the query stops and its connection is released). A failure after the status line
 * has been sent can only cut the response short; it is logged.
 */
export async function sendStream(req: Request, res: Response, source: Readable, ...steps: Transform[]) {
  try {
    await pipeline([source, ...steps, res]);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_STREAM_PREMATURE_CLOSE')
      req.log.warn({ err: error, correlationId: req.correlationId }, 'streamed response failed');
    source.destroy();
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
