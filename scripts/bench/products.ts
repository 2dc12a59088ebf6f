import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { migrate } from '../../config/database.js';
import { startServer } from '../../api/server.js';
import { issueToken } from '../../domain/users/tokens.js';
import { createDatabases } from '../create-databases.js';

const ROWS = 1000;
const BATCH_RUNS = 5;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/**
 * One batch stock update of 1,000 products vs 1,000 single quantity updates, over HTTP against a real app
 * (real PostgreSQL, real Redis) on its own database (`BENCH_DATABASE_URL`, default `stockroom_bench`).
 * Only rows it creates are touched, and they are removed at the end. Figures, never assertions.
 */
export async function benchProducts(): Promise<Record<string, number | string>> {
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom_bench';
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    REDIS_PREFIX: `bench${randomBytes(3).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    SESSION_SECRET: randomBytes(16).toString('hex'),
    SEED_DEMO_DATA: 'false',
    RUN_WORKERS: 'false',
  });
  await createDatabases(databaseUrl);
  const services = await openServices(config);
  await migrate(services.orm);
  const server = await startServer(services, 0);
  const base = `http://127.0.0.1:${server.port}`;
  const em = () => services.orm.em.fork();
  const tag = `bench-${randomUUID().slice(0, 8)}`;
  let ids: string[] = [];
  try {
    await em().execute("insert into app_user (username, password_hash, role) values (?, null, 'ROLE_USER')", [
      tag,
    ]);
    const auth = `Bearer ${await issueToken({ sub: tag, role: 'ROLE_USER' }, config.jwtSecret, 3600)}`;
    const rows = await em().execute<{ id: string }[]>(
      `insert into product (name, quantity, price, sku)
       select ? || '-' || g, 10, 2.50, ? || '-' || g from generate_series(1, ?) g returning id::text as id`,
      [tag, tag, ROWS],
    );
    ids = rows.map(r => r.id);
    const headers = { Authorization: auth, 'Content-Type': 'application/json' };
    const single = async (id: string, quantity: number) => {
      const res = await fetch(`${base}/api/products/${id}/quantity`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ quantity }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`single update answered ${res.status}`);
    };
    const batch = async (quantity: number) => {
      const res = await fetch(`${base}/api/products/stock/batch`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ updates: ids.map(id => ({ productId: id, quantity })) }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`batch update answered ${res.status}`);
    };

    // Warm-up: connections, JIT, plans.
    for (let i = 0; i < 50; i += 1) await single(ids[i], 11);
    await batch(12);

    let t = performance.now();
    for (let i = 0; i < ROWS; i += 1) await single(ids[i], 20 + (i % 7));
    const sequentialMs = performance.now() - t;

    t = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < ROWS) {
          const i = next++;
          await single(ids[i], 30 + (i % 7));
        }
      }),
    );
    const parallelMs = performance.now() - t;

    const batchTimes: number[] = [];
    for (let run = 0; run < BATCH_RUNS; run += 1) {
      t = performance.now();
      await batch(40 + run);
      batchTimes.push(performance.now() - t);
    }
    const batchMs = median(batchTimes);
    return {
      rows: ROWS,
      'batch (1 request, median of 5) ms': round(batchMs),
      '1,000 single updates, sequential ms': round(sequentialMs),
      '1,000 single updates, 10 connections ms': round(parallelMs),
      'ratio sequential / batch (target >= 20)': round(sequentialMs / batchMs),
      'ratio 10 connections / batch': round(parallelMs / batchMs),
    };
  } finally {
    if (ids.length > 0) {
      const list = `{${ids.join(',')}}`;
      await em().execute('delete from outbox_event where aggregate_id = any(?::text[])', [list]);
      await em().execute('delete from product where id = any(?::bigint[])', [list]);
    }
    await em().execute('delete from app_user where username = ?', [tag]);
    await server.stop();
    await closeServices(services);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchProducts();
  for (const [name, value] of Object.entries(result)) console.log(`${name.padEnd(44)} ${value}`);
}
