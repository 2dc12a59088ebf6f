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
  // Asynchronous standard output: lines written while a write is in flight go out together in one write
  // (whole lines, never split), instead of one blocking write per record; pino flushes it at exit.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
