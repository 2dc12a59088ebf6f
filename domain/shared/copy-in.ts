import type { Writable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** A `COPY ... FROM STDIN` on a connection, and how it ended. */
export interface CopyIn {
  /** Where the COPY's data is written. */
  readonly stream: Writable;
  /** Resolves when the COPY is done, rejects with the error that ended it (handled: awaiting it is optional). */
  readonly done: Promise<void>;
  /**
   * Whether the COPY ended (done, or failed in the database: a conflict, a constraint, a cancel at shutdown). An
   * ended COPY has let go of its connection and must not be destroyed (its CopyFail would crash the process).
   */
  ended(): boolean;
  /** The error that ended it: what a caller reports, not what a write to the ended COPY throws after it. */
  failure(): Error | undefined;
  /** Ends the COPY with `error` (the connection can then roll back) unless it ended already; waits for it. */
  abandon(error: Error): Promise<void>;
}

/** Starts `sql` (a `COPY ... FROM STDIN`) on `client`, in its transaction. */
export function copyIn(client: pg.PoolClient, sql: string): CopyIn {
  const stream: Writable = client.query(copyFrom(sql));
  let ended = false;
  let failure: Error | undefined;
  const done = new Promise<void>((resolve, reject) => {
    stream.once('finish', () => {
      ended = true;
      resolve();
    });
    stream.once('error', error => {
      ended = true;
      failure = error;
      reject(error);
    });
  });
  done.catch(() => undefined);
  return {
    stream,
    done,
    ended: () => ended,
    failure: () => failure,
    abandon: async error => {
      if (!ended) stream.destroy(error);
      await done.catch(() => undefined);
    },
  };
}
