import { performance } from 'node:perf_hooks';
import { request } from 'node:http';
import pg from 'pg';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { startServer } from '../../api/server.js';
import { createDatabases } from '../create-databases.js';
import { printTable, resetBenchDatabase } from './support.js';

/**
 * Unpaged GET /api/inventory of BENCH_LIST_ITEMS items (100,000 by default) on one web process of its own
 * (demo mode, anonymous reads): time to the first byte and to the last, one reader at a time and four at
 * once, over BENCH_LIST_ROUNDS rounds (figures, not assertions). Database: BENCH_DATABASE_URL + `_list`.
 */
const ITEMS = Number(process.env.BENCH_LIST_ITEMS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_LIST_ROUNDS ?? 5);
const url = `${process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom_bench'}_list`;

function read(port: number): Promise<{ firstMs: number; totalMs: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/inventory' }, res => {
      let firstMs = -1;
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (firstMs < 0) firstMs = performance.now() - started;
        bytes += chunk.length;
      });
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        else resolve({ firstMs, totalMs: performance.now() - started, bytes });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  await createDatabases(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await resetBenchDatabase(client, url);
  await client.query(
    `with s as (insert into supplier (name, created_by) values ('Bench supplier', 'seed') returning id)
     insert into inventory_item (name, sku, quantity, price, supplier_id, created_by)
     select 'Bench item ' || n, 'BENCH-' || n, n, 1.25, s.id, 'seed' from generate_series(1, $1::int) n, s`,
    [ITEMS],
  );
  await client.query('analyze');
  await client.end();
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: url,
    APP_DEMO_READONLY: 'true',
    SEED_DEMO_DATA: 'false',
    RUN_WORKERS: 'false',
    JWT_SECRET: process.env.JWT_SECRET ?? 'bench-secret-that-is-long-enough-0123456789',
    SESSION_SECRET: process.env.SESSION_SECRET ?? 'bench-session-secret-0123456789',
  });
  const services = await openServices(config);
  const server = await startServer(services, 0);
  try {
    await read(server.port);
    const one: Awaited<ReturnType<typeof read>>[] = [];
    const four: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      one.push(await read(server.port));
      const started = performance.now();
      await Promise.all([0, 1, 2, 3].map(() => read(server.port)));
      four.push(performance.now() - started);
    }
    printTable(`Unpaged GET /api/inventory, ${ITEMS} items, medians of ${ROUNDS}`, [
      {
        MB: (one[0].bytes / 1e6).toFixed(1),
        'first byte ms': Math.round(median(one.map(r => r.firstMs))),
        'last byte ms': Math.round(median(one.map(r => r.totalMs))),
        '4 at once, all done ms': Math.round(median(four)),
      },
    ]);
  } finally {
    await server.stop();
    await closeServices(services);
  }
}

await main();
