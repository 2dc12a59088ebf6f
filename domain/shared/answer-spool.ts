import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Writable, type Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RetryLaterError } from './errors.js';
import { processAlive } from './process-alive.js';

/** Bytes gathered before one write to the file: few system calls for answers written a CSV record at a time. */
const FLUSH_BYTES = 256 * 1024;
/** What a reader refused for want of disk room is told to wait: spooled answers are read out and deleted. */
export const SPOOL_FULL_RETRY_AFTER_SECONDS = 5;

/** A whole answer in a file of its own, deleted once read (or discarded). */
export interface SpooledAnswer {
  readonly bytes: number;
  /**
   * The file from its first byte in parts of `size` bytes (the last one shorter), all read into ONE buffer: a
   * part is valid until the next is asked for. Gives the disk room back once read out or left. Once only.
   */
  parts(size: number): AsyncGenerator<Buffer>;
  /** Deletes the file if no reader took it. */
  discard(): Promise<void>;
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
      if (Number.isInteger(pid) && !processAlive(pid))
        await unlink(path.join(dir, name)).catch(() => undefined);
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
    const take = () => {
      if (taken) throw new Error('AnswerSpool: the answer was read already');
      taken = true;
    };
    const bytes = reserved;
    return {
      bytes,
      parts: async function* (size: number) {
        take();
        try {
          const buffer = Buffer.allocUnsafe(Math.min(size, Math.max(1, bytes)));
          for (let at = 0; at < bytes;) {
            let filled = 0;
            while (filled < buffer.length && at + filled < bytes) {
              const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, at + filled);
              if (bytesRead === 0) throw new Error('AnswerSpool: the file ended early');
              filled += bytesRead;
            }
            at += filled;
            yield buffer.subarray(0, filled);
          }
        } finally {
          await close();
        }
      },
      discard: async () => {
        if (!taken) await close();
      },
    };
  }

  /**
   * The file's writer: `reserve(n)` takes n bytes of the budget or refuses them (the answer then fails). Small
   * chunks are gathered into one buffer of FLUSH_BYTES, reused for every write to the file, so an answer or an
   * upload of any size allocates no buffer of its own per write.
   */
  private writer(handle: FileHandle, reserve: (n: number) => boolean): Writable {
    const gathered = Buffer.allocUnsafe(FLUSH_BYTES);
    let filled = 0;
    let position = 0;
    const writeOut = async (data: Buffer) => {
      for (let written = 0; written < data.length;) {
        const { bytesWritten } = await handle.write(data, written, data.length - written, position);
        written += bytesWritten;
        position += bytesWritten;
      }
    };
    const flush = async () => {
      if (filled === 0) return;
      const data = gathered.subarray(0, filled);
      filled = 0;
      await writeOut(data);
    };
    /** Gathers `chunk` (answers false, nothing done) when it fits in the buffer without filling it. */
    const gather = (chunk: Buffer): boolean => {
      if (filled + chunk.length >= FLUSH_BYTES) return false;
      chunk.copy(gathered, filled);
      filled += chunk.length;
      return true;
    };
    const take = async (chunk: Buffer) => {
      // A chunk as large as the buffer goes out as it is (after what was gathered before it).
      if (chunk.length >= FLUSH_BYTES) {
        await flush();
        return writeOut(chunk);
      }
      const room = FLUSH_BYTES - filled;
      chunk.copy(gathered, filled, 0, Math.min(room, chunk.length));
      filled += Math.min(room, chunk.length);
      await flush();
      if (chunk.length > room) {
        chunk.copy(gathered, 0, room);
        filled = chunk.length - room;
      }
    };
    return new Writable({
      highWaterMark: FLUSH_BYTES,
      write(chunk: Buffer, _encoding, done) {
        if (!reserve(chunk.length))
          return done(new RetryLaterError(SPOOL_FULL_RETRY_AFTER_SECONDS, 'error.streams.busy'));
        if (gather(chunk)) return done();
        take(chunk).then(() => done(), done);
      },
      final(done) {
        flush().then(() => done(), done);
      },
    });
  }
}
