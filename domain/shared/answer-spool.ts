import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Writable, type Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RetryLaterError } from './errors.js';

/** Bytes gathered before one write to the file: few system calls for answers written a CSV record at a time. */
const FLUSH_BYTES = 256 * 1024;
/** What a reader refused for want of disk room is told to wait: spooled answers are read out and deleted. */
export const SPOOL_FULL_RETRY_AFTER_SECONDS = 5;

/** A whole answer in a file of its own, deleted once read (or discarded). */
export interface SpooledAnswer {
  readonly bytes: number;
  /** The file from its first byte; gives its disk room back when it closes, however it ends. Once only. */
  reader(): Readable;
  /** Deletes the file if no reader took it. */
  discard(): Promise<void>;
}

/** Whether process `pid` still runs (a file of a live process is never swept). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Streamed answers (unpaged lists, exports) written whole to a temporary file at the speed the database and
 * the disk allow, so that the database connection that produced them is released before the client reads a
 * byte: a client that stalls then holds a file, never a connection. Each file is unlinked as soon as it is
 * opened (its open handle keeps it until read out or discarded, and the kernel frees it if the process dies);
 * files a dead process left between open and unlink are swept at start. The files of one process share a
 * disk budget: an answer that would exceed it is refused with 503 and Retry-After before anything is sent.
 */
export class AnswerSpool {
  /** Bytes of every open file of this process. */
  private used = 0;

  private constructor(
    private readonly dir: string,
    readonly budgetBytes: number,
  ) {}

  /** Creates `dir` if needed and deletes the files that processes which no longer run left in it. */
  static async open(dir: string, budgetBytes: number): Promise<AnswerSpool> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    for (const name of await readdir(dir)) {
      const pid = Number(/^(\d+)-/.exec(name)?.[1]);
      if (Number.isInteger(pid) && !alive(pid)) await unlink(path.join(dir, name)).catch(() => undefined);
    }
    return new AnswerSpool(dir, budgetBytes);
  }

  /** Bytes of this process's spooled answers still open. */
  get usedBytes(): number {
    return this.used;
  }

  /**
   * Pipes `source` through `steps` into a new file and resolves once all of it is there (the source has
   * then ended and released what it held). Fails, with the file deleted and the source destroyed, when the
   * source fails, `signal` aborts, or the answer would exceed the budget (RetryLaterError).
   */
  async fill(source: Readable, steps: Transform[], signal?: AbortSignal): Promise<SpooledAnswer> {
    const file = path.join(this.dir, `${process.pid}-${randomUUID()}`);
    let handle: FileHandle;
    try {
      handle = await open(file, 'w+', 0o600);
    } catch (error) {
      source.destroy();
      throw error;
    }
    await unlink(file).catch(() => undefined);
    let reserved = 0;
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      this.used -= reserved;
      reserved = 0;
      await handle.close().catch(() => undefined);
    };
    const writer = this.writer(handle, n => {
      if (this.used + n > this.budgetBytes) return false;
      this.used += n;
      reserved += n;
      return true;
    });
    try {
      await pipeline([source, ...steps, writer], { signal });
    } catch (error) {
      source.destroy();
      await close();
      throw error;
    }
    let taken = false;
    return {
      bytes: reserved,
      reader: () => {
        if (taken) throw new Error('AnswerSpool: the answer was read already');
        taken = true;
        const stream = handle.createReadStream({ start: 0 });
        stream.once('close', () => void close());
        return stream;
      },
      discard: async () => {
        if (!taken) await close();
      },
    };
  }

  /** The file's writer: `reserve(n)` takes n bytes of the budget or refuses them (the answer then fails). */
  private writer(handle: FileHandle, reserve: (n: number) => boolean): Writable {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let position = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const data = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      for (let written = 0; written < data.length;) {
        const { bytesWritten } = await handle.write(data, written, data.length - written, position);
        written += bytesWritten;
        position += bytesWritten;
      }
    };
    return new Writable({
      highWaterMark: FLUSH_BYTES,
      write(chunk: Buffer, _encoding, done) {
        if (!reserve(chunk.length))
          return done(new RetryLaterError(SPOOL_FULL_RETRY_AFTER_SECONDS, 'error.streams.busy'));
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes < FLUSH_BYTES) return done();
        flush().then(() => done(), done);
      },
      final(done) {
        flush().then(() => done(), done);
      },
    });
  }
}
