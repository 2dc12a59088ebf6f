import { expect } from 'chai';
import pg from 'pg';
import { reclaimDeadConnections } from '../../config/reclaim-dead-connections.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';

/** Ends a connection's server process from another connection, as a PostgreSQL crash or restart would. */
async function killBackend(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
  } finally {
    await admin.end();
  }
}

const errorOf = (client: pg.PoolClient) =>
  new Promise<void>(resolve => client.once('error', () => resolve()));

describe('A connection that dies while checked out goes back to the pool', () => {
  let pool: pg.Pool;
  beforeEach(() => {
    // One connection: the second checkout gets one only if the dead one was given back.
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, connectionTimeoutMillis: 3000 });
    reclaimDeadConnections(pool, 100);
  });
  afterEach(() => pool.end());

  it('When its holder never releases it, then the pool takes it back and opens a new one', async () => {
    const stuck = await pool.connect();
    const died = errorOf(stuck);
    await killBackend(stuck);
    await died;
    const next = await pool.connect();
    expect((await next.query<{ n: number }>('select 1 as n')).rows[0].n).to.equal(1);
    next.release();
    // The holder's late release finds its connection already given back.
    expect(() => stuck.release()).to.throw(/already been released/);
  });

  it('When its holder releases it in time, then it is left alone and the pool keeps serving', async () => {
    const held = await pool.connect();
    const died = errorOf(held);
    await killBackend(held);
    await died;
    held.release(new Error('connection lost'));
    // Checked out again at once, past the grace period: the reclaim of the dead one must not release it.
    const next = await pool.connect();
    const graceOver = new Promise(resolve => setTimeout(resolve, 300));
    await graceOver;
    expect((await next.query<{ n: number }>('select 2 as n')).rows[0].n).to.equal(2);
    expect(pool.totalCount).to.equal(1);
    expect(pool.idleCount).to.equal(0);
    next.release();
  });
});
