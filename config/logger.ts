import { pino, type DestinationStream, type Logger } from 'pino';

/** Paths pino masks in every record: credentials never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'password',
  '*.password',
  'token',
  '*.token',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'stockroom' },
    redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return pino(options, destination ?? bufferedStdout());
}

const FLUSH_INTERVAL_MS = 100;

/**
 * Standard output written in batches of whole lines: a write when 8 KB are pending or every 100 ms, instead of
 * one write system call per record (one per request at `info`). pino flushes it synchronously at exit, so only
 * a kill -9 can lose the last 100 ms of lines.
 */
function bufferedStdout(): DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 8192 });
  setInterval(() => {
    try {
      stream.flush();
    } catch {
      // not writable (closing); pino's exit handler flushes what is left
    }
  }, FLUSH_INTERVAL_MS).unref();
  return stream;
}
