import type pg from 'pg';
import type { OutboxConsumer } from './consumers.js';

/** Advisory lock keys of the run slots within a consumer's lock namespace (its partitions use 0-15). */
export const SLOT_KEY_BASE = 1000;

/** How long one wait for a slot lasts before the run looks at its stop signal and the other slots again. */
const SLOT_WAIT_MS = 1000;

/** A run slot held on a connection of its own; `release` gives both back. */
export interface RunSlot {
  slot: number;
  release(): Promise<void>;
}

/**
 * Takes one of `runs` run slots of a consumer, shared by every worker process: a session advisory lock on a
 * connection that the run keeps until it ends, so at most `runs` runs of one consumer apply batches at once
 * across all processes. A run whose slots are all taken waits for one (a doorbell job that waits keeps its
 * wake-up: it drains once the run before it has ended). A process that dies frees its slot with its connection.
 * Returns undefined when `stopping` aborts while it waits.
 */
export async function takeRunSlot(
  pool: pg.Pool,
  consumer: OutboxConsumer,
  runs: number,
  stopping?: AbortSignal,
): Promise<RunSlot | undefined> {
  const client = await pool.connect();
  let broken = false;
  const release = async () => {
    client.release(broken);
  };
  try {
    for (let attempt = 0; !stopping?.aborted; attempt++) {
      const { rows } = await client.query<{ slot: number }>(
        `select k as slot from generate_series(0, $2::int - 1) k
          where pg_try_advisory_lock($1::int, ${SLOT_KEY_BASE} + k) limit 1`,
        [consumer.lockNamespace, runs],
      );
      const slot = rows[0]?.slot ?? (await waitForSlot(client, consumer, runs, attempt));
      if (slot === undefined) continue;
      return {
        slot,
        release: async () => {
          await client
            .query('select pg_advisory_unlock($1::int, $2::int)', [
              consumer.lockNamespace,
              SLOT_KEY_BASE + slot,
            ])
            .catch(() => (broken = true));
          await release();
        },
      };
    }
    await release();
    return undefined;
  } catch (error) {
    broken = true;
    await release();
    throw error;
  }
}

/** Waits (at most SLOT_WAIT_MS) for one slot, a different one each attempt; its number, or undefined. */
async function waitForSlot(
  client: pg.PoolClient,
  consumer: OutboxConsumer,
  runs: number,
  attempt: number,
): Promise<number | undefined> {
  const slot = attempt % runs;
  try {
    await client.query('begin');
    // lock_timeout bounds the wait of pg_advisory_lock like any other lock wait; a session lock outlives the
    // transaction that took it.
    await client.query(`set local lock_timeout = ${SLOT_WAIT_MS}`);
    await client.query('select pg_advisory_lock($1::int, $2::int)', [
      consumer.lockNamespace,
      SLOT_KEY_BASE + slot,
    ]);
    await client.query('commit');
    return slot;
  } catch (error) {
    await client.query('rollback');
    if ((error as { code?: string }).code === '55P03') return undefined;
    throw error;
  }
}
