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

/**
 * Development on a terminal: records printed for people (pino-pretty, loaded only then). Everywhere else,
 * including production, the JSON lines of {@link createLogger}.
 */
export async function createProcessLogger(level: string, forPeople: boolean): Promise<Logger> {
  if (!forPeople) return createLogger(level);
  const { default: pretty } = await import('pino-pretty');
  return createLogger(
    level,
    pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }),
  );
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'stockroom' },
    redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
    timestamp: isoTimeOncePerMs,
  };
  return pino(options, destination ?? bufferedStdout());
}

/**
 * pino's `isoTime` (`,"time":"<ISO 8601>"`), formatted once per millisecond: under load several records share
 * a millisecond, and the Date plus toISOString were a visible share of a request's access-log line.
 */
let stampedAt = -1;
let stamp = '';
function isoTimeOncePerMs(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

const FLUSH_INTERVAL_MS = 100;
const BATCH_CHARS = 32 * 1024;

/** Where the logger writes: lines, and `flush` as pino's `logger.flush(cb)` calls it. */
type LineSink = DestinationStream & { flush(cb?: (error?: Error) => void): void };

/** The process's one standard output batcher, shared by every logger (one file descriptor, one exit hook). */
let stdout: LineSink | undefined;
const bufferedStdout = (): LineSink => (stdout ??= batchedStdout());

/**
 * Standard output written in batches of whole lines: the lines of up to FLUSH_INTERVAL_MS (or BATCH_CHARS) are joined
 * and handed to sonic-boom as ONE string, which writes it without blocking: one write system call per batch
 * instead of one per record (one per request at `info`). Not sonic-boom's own batching (`minLength`): it takes
 * the byte length of its whole pending string on every record, which flattens that string each time (the
 * largest allocation of a read). At exit the pending lines go to sonic-boom first and pino's exit hook then
 * writes them synchronously, so only a kill -9 can lose the last FLUSH_INTERVAL_MS of lines.
 */
function batchedStdout(): LineSink {
  let lines: string[] = [];
  let chars = 0;
  const handOver = () => {
    if (lines.length === 0) return;
    const batch = lines.join('');
    lines = [];
    chars = 0;
    stream.write(batch);
  };
  // Before pino.destination registers its own exit hook (listeners run in order).
  process.on('exit', handOver);
  const stream = pino.destination({ dest: 1, sync: false });
  setInterval(() => {
    try {
      handOver();
    } catch {
      // not writable (closing); the exit hooks write what is left
    }
  }, FLUSH_INTERVAL_MS).unref();
  return {
    write(line: string) {
      lines.push(line);
      chars += line.length;
      if (chars >= BATCH_CHARS) handOver();
    },
    // `logger.flush(cb)`: the pending lines go to sonic-boom, then its own flush calls `cb` (at once: without
    // minLength it already writes each string as soon as it can).
    flush(cb) {
      handOver();
      stream.flush(cb);
    },
  };
}
