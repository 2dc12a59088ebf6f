import { once } from 'node:events';
import { Readable } from 'node:stream';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { SqlPart } from './sql.js';
import type { PostgresConnection } from './postgres-connection.js';
import { RetryLaterError } from './errors.js';
import type { StreamSlots } from './stream-slots.js';

/**
 * Rows fetched per cursor round trip: enough to amortise the round trip, few enough that a batch dies young
 * (larger batches outlived the young generation and grew the web process over a long JSON list).
 */
const BATCH_ROWS = 250;

/**
 * A streamed read is spooled at the database's speed (AnswerSpool), but a multi-million-row export still
 * takes longer than the pool's 30 s statement timeout. Each stream gets its own, longer bound, set inside its
 * transaction.
 */
const STREAM_STATEMENT_TIMEOUT = '15min';

/** `?` placeholders (the style of every raw query here) -> `$1..$n`; quoted literals are left alone. */
export function toDollarParams(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const c of sql) {
    if (c === "'") quoted = !quoted;
    out += c === '?' && !quoted ? `$${++n}` : c;
  }
  return out;
}

/** What a stream that found no free connection of its pool in time is told to wait: streams come and go. */
export const STREAM_POOL_RETRY_AFTER_SECONDS = 2;
/**
 * How long a stream waits for a connection of its pool. Every stream is read into a file by its reader at
 * the database's speed (AnswerSpool), so a connection comes free within a few seconds unless the database
 * itself is slow.
 */
const CONNECTION_WAIT_MS = 5000;

/**
 * Reads that may return any number of rows (unpaged lists, CSV exports) stream from a server-side cursor on
 * a small pool of their own, never one the write path needs. Their reader (the presenters' sendStream) must
 * read them whole at once, into an AnswerSpool, never at a client's pace: a connection is held only while
 * PostgreSQL produces rows. A stream waits up to CONNECTION_WAIT_MS for a connection, then is refused (503
 * with Retry-After). Every stream releases its connection on end, on error and when its reader goes away.
 */
export class RowStreams {
  private readonly pool: pg.Pool;

  constructor(database: PostgresConnection, max: number, applicationName: string) {
    this.pool = new pg.Pool({
      connectionString: database.connectionString,
      ssl: database.ssl,
      max,
      idleTimeoutMillis: 10000,
      connectionTimeoutMillis: CONNECTION_WAIT_MS,
      allowExitOnIdle: true,
      application_name: applicationName,
    });
    // An idle client dropped by the server must not take the process down; the pool discards it.
    this.pool.on('error', () => undefined);
  }

  /**
   * Runs `query` through a cursor and resolves with a readable of row batches (arrays of mapped rows) once
   * the first batch is in, so that a query that cannot start fails here, before a response is committed.
   * Backpressure: the next batch is fetched only when the reader asks for it. Destroying the readable closes
   * the cursor (the query stops) and releases the connection.
   */
  async open<T>(query: SqlPart, map: (row: any) => T): Promise<Readable> {
    return this.firstThenRest(this.batches(await this.connect(), query, map));
  }

  /**
   * Runs `copy` (a `COPY ... TO STDOUT` query whose readable is its output, e.g. CsvCopyOut) and resolves with
   * it once its first bytes (or its end) are in, so that a statement that cannot start fails here, before a
   * response is committed. Same pool and release rules as open: a reader that stops reading stops the
   * reads from the server's socket (the server then waits to send), and destroying the readable ends the
   * connection, which ends the COPY on the server. The readable is the query itself (no wrapper): every layer
   * between the socket and the response allocates its chunks outside the JavaScript heap, where they wait for
   * a full collection, so fewer layers hold the process's memory flat.
   */
  async copyOut(copy: Readable & pg.Submittable): Promise<Readable> {
    const client = await this.connect();
    let released = false;
    const release = (error?: Error) => {
      if (released) return;
      released = true;
      // Any exit but the end ends the connection: with the COPY still running, pg closes its socket at once
      // (the server's next write fails and the COPY ends with its transaction).
      client.release(error);
    };
    try {
      await beginStream(client);
      // A COPY that has not sent its first row yet (sorting) notices a closed connection within a second.
      // Its dates and times are written as ISO text in UTC, whatever the server's and role's defaults
      // (CsvCopyOut reads them so).
      await client.query(
        `set local client_connection_check_interval = '1s'; set local timezone = 'UTC'; set local datestyle = 'ISO, YMD'`,
      );
      const out = client.query(copy);
      const connection = client;
      let ended = false;
      out.once('end', () => {
        ended = true;
        connection.query('commit').then(
          () => release(),
          (error: Error) => release(error),
        );
      });
      out.once('close', () => {
        if (!ended) release(new Error('stream abandoned'));
      });
      // 'readable' comes with the first bytes, or with the end of a COPY of no rows; 'error' rejects.
      await once(out, 'readable');
      return out;
    } catch (error) {
      release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  }

  /** A connection of the pool, or 503 with Retry-After when none came free within CONNECTION_WAIT_MS. */
  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      // pg-pool's words when connectionTimeoutMillis passed (every connection in use, or a slow server).
      if ((error as Error).message.startsWith('timeout exceeded when trying to connect'))
        throw new RetryLaterError(STREAM_POOL_RETRY_AFTER_SECONDS, 'error.streams.busy');
      throw error;
    }
  }

  /** Resolves once `source` yields its first item (or ends); the readable yields it and the rest. */
  private async firstThenRest<T>(source: AsyncGenerator<T, void, undefined>) {
    const first = await source.next();
    async function* all() {
      if (first.done) return;
      yield first.value;
      yield* source;
    }
    const readable = Readable.from(all(), { objectMode: true, highWaterMark: 1 });
    // A reader that never starts (the response failed before piping) still returns the connection.
    readable.once('close', () => void source.return(undefined));
    return readable;
  }

  /** Reads `query` on `client`, and releases it however the reading ends. */
  private async *batches<T>(
    client: pg.PoolClient,
    query: SqlPart,
    map: (row: any) => T,
  ): AsyncGenerator<T[], void, undefined> {
    let finished = false;
    try {
      await beginStream(client);
      const cursor = client.query(new Cursor(toDollarParams(query.sql), query.params));
      for (;;) {
        const rows = await cursor.read(BATCH_ROWS);
        if (rows.length === 0) break;
        yield rows.map(map);
      }
      await cursor.close();
      await client.query('commit');
      finished = true;
    } finally {
      // Any other exit (an error, or the reader went away with the cursor still open) destroys the
      // connection: the server then ends the query and its transaction at once, and nothing half-read is
      // ever handed to the next reader.
      client.release(finished ? undefined : new Error('stream abandoned'));
    }
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

/** A stream's transaction: read only, every statement bounded by STREAM_STATEMENT_TIMEOUT. */
async function beginStream(client: pg.PoolClient): Promise<void> {
  await client.query('begin read only');
  await client.query(`set local statement_timeout = '${STREAM_STATEMENT_TIMEOUT}'`);
}

/** Who a counted stream belongs to, and when the answer it feeds is over. */
export interface StreamOwner {
  /** A user, or a client address when anonymous. */
  key: string;
  /**
   * Calls `release` once the answer is over however it ends (delivered, failed, or its client gone): the
   * stream's rows are read long before (into a spooled file), the client's socket and file last until then.
   */
  whenDone(release: () => void): void;
}

/**
 * The long streamed answers (exports, unpaged history): each first takes one of its owner's slots
 * (STREAMS_PER_USER across all web processes; 429 beyond), then a connection of their own pool, and gives
 * the slot back when its answer is over, however it ends: a bound on each user's sockets and spooled files.
 */
export class CountedRowStreams {
  constructor(
    private readonly rows: RowStreams,
    private readonly slots: StreamSlots,
  ) {}

  async open<T>(query: SqlPart, map: (row: any) => T, owner: StreamOwner): Promise<Readable> {
    return this.counted(owner, () => this.rows.open(query, map));
  }

  /** copyOut of RowStreams, counted against `owner` like open. */
  async copyOut(copy: Readable & pg.Submittable, owner: StreamOwner): Promise<Readable> {
    return this.counted(owner, () => this.rows.copyOut(copy));
  }

  private async counted(owner: StreamOwner, start: () => Promise<Readable>): Promise<Readable> {
    const slot = await this.slots.acquire(owner.key);
    owner.whenDone(() => slot.release());
    try {
      return await start();
    } catch (error) {
      slot.release();
      throw error;
    }
  }

  close(): Promise<void> {
    return this.rows.close();
  }
}
