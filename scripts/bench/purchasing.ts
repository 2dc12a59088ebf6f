import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { createDatabases } from '../create-databases.js';
import { createPurchaseOrder } from '../../domain/purchasing/create-purchase-order.js';
import { placePurchaseOrder } from '../../domain/purchasing/place-purchase-order.js';
import { receiveGoods } from '../../domain/purchasing/receive-goods.js';
import { benchDatabaseUrl, printTable, resetBenchDatabase } from './support.js';
import { holdMachineForBench } from './machine-lock.js';

/**
 * `npm run bench:purchasing`: the receipt of a 100-line order (the use case in its one transaction: order
 * lock, item locks, the set-based stock write with 100 events, the receipt rows), repeated against one order
 * whose lines await far more than each receipt brings. BENCH_DATABASE_URL, default `stockroom_bench_purchasing`.
 */
const LINES = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const url = process.env.BENCH_DATABASE_URL ?? benchDatabaseUrl('stockroom_bench_purchasing');

async function main(): Promise<void> {
  holdMachineForBench();
  await createDatabases(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await resetBenchDatabase(client, url);
  const [{ id: supplierId }] = (
    await client.query<{ id: string }>(
      "insert into supplier (name, created_by) values ('Bench', 'bench') returning id",
    )
  ).rows;
  const { rows: items } = await client.query<{ id: string }>(
    `insert into inventory_item (name, quantity, price, supplier_id, created_by)
     select 'Bench item ' || n, 0, 2.50, $1, 'bench' from generate_series(1, ${LINES}) n returning id`,
    [supplierId],
  );
  await client.end();
  const services = await openServices(
    loadConfig({
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: url,
      REDIS_PREFIX: `bench-purchasing-${randomUUID().slice(0, 8)}`,
      JWT_SECRET: randomUUID() + randomUUID(),
      SESSION_SECRET: randomUUID(),
      LOG_LEVEL: 'warn',
      SEED_DEMO_DATA: 'false',
    }),
  );
  try {
    const context = { user: 'bench', correlationId: null };
    const order = await createPurchaseOrder(
      services.orm.em.fork(),
      { supplierId, lines: items.map(item => ({ itemId: item.id, quantity: 999_999, unitCost: 1.25 })) },
      context,
    );
    await placePurchaseOrder(services.orm.em.fork(), { id: order.id, defaultLeadDays: 7 });
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      await receiveGoods(
        services.orm.em.fork(),
        { id: order.id, lines: items.map(item => ({ itemId: item.id, quantity: 1 })) },
        context,
      );
      if (round >= 5) times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
    printTable(`Receipt of a ${LINES}-line order (${times.length} receipts after 5 warm-up)`, [
      { p50_ms: at(0.5), p90_ms: at(0.9), max_ms: at(1) },
    ]);
  } finally {
    await closeServices(services);
  }
}

await main();
