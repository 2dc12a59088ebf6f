import { expect } from 'chai';
import pg from 'pg';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import {
  CONNECTION_LIFETIME_SECONDS,
  staggerConnectionLifetimes,
} from '../../domain/shared/connection-lifetimes.js';
import { nativePool } from '../../domain/shared/native-transaction.js';
import { consumerPool } from '../../domain/outbox/consumer-pool.js';
import { TEST_DATABASE_URL, testEnv } from '../support/test-env.js';

type WithOptions = { options: { maxLifetimeSeconds: number } };

/** Opens `count` connections of `pool` at once and gives them back; resolves with each one's lifetime in ms. */
async function lifetimesOf(pool: pg.Pool, count: number): Promise<number[]> {
  const opened = new Map<pg.PoolClient, number>();
  const lifetimes: number[] = [];
  const allRemoved = new Promise<void>(resolve =>
    pool.on('remove', client => {
      lifetimes.push(performance.now() - opened.get(client)!);
      if (lifetimes.length === count) resolve();
    }),
  );
  pool.on('connect', client => opened.set(client, performance.now()));
  const clients = await Promise.all(Array.from({ length: count }, () => pool.connect()));
  for (const client of clients) client.release();
  await allRemoved;
  return lifetimes;
}

describe('Pooled connections end at staggered times', () => {
  it('When a pool opens its connections together, then they do not all end together', async () => {
    // One second on average: each connection ends 0.75-1.25 s after it opened, not all at 1 s.
    const pool = new pg.Pool({
      connectionString: TEST_DATABASE_URL,
      max: 10,
      maxLifetimeSeconds: 1,
      idleTimeoutMillis: 60_000,
    });
    staggerConnectionLifetimes(pool);
    try {
      const lifetimes = await lifetimesOf(pool, 10);
      for (const ms of lifetimes) expect(ms).to.be.within(740, 1300);
      // Ten uniform draws over 500 ms span less than 100 ms once in ~240,000 runs; unstaggered they spanned 5 ms.
      expect(Math.max(...lifetimes) - Math.min(...lifetimes)).to.be.greaterThan(100);
    } finally {
      await pool.end();
    }
  });

  it("When the app opens its pools, then the ORM's and the outbox consumers' connections get staggered lifetimes", async () => {
    const services = await openServices(loadConfig(testEnv()));
    try {
      for (const pool of [await nativePool(services.orm.em), await consumerPool(services.orm.em)]) {
        const drawn = Array.from(
          { length: 20 },
          () => (pool as unknown as WithOptions).options.maxLifetimeSeconds,
        );
        for (const seconds of drawn)
          expect(seconds).to.be.within(
            CONNECTION_LIFETIME_SECONDS * 0.75,
            CONNECTION_LIFETIME_SECONDS * 1.25,
          );
        expect(new Set(drawn).size).to.be.greaterThan(1);
      }
    } finally {
      await closeServices(services);
    }
  });
});
