import express from 'express';
import type { Server } from 'node:http';
import { loadConfig } from '../../config/env.js';
import { closeServices, openServices } from '../../config/services.js';
import { migrate } from '../../config/database.js';
import { startServer } from '../../api/server.js';
import { createDatabases } from '../create-databases.js';
import { load, printTable, ratio } from './support.js';
import { runScript } from '../run-script.js';
import { benchProducts } from './products.js';
import { benchInventory } from './inventory.js';
import { benchAnalytics } from './analytics.js';
import { benchEventPipeline } from './pipeline.js';
import { benchCsv } from './csv.js';
import { holdMachineForBench } from './machine-lock.js';

const BENCH_DB = 'postgres://postgres@127.0.0.1:5432/stockroom_bench';

/** Request pipeline overhead: Stockroom's liveness route vs a bare Express route, same machine, same run. */
async function benchPipeline(): Promise<void> {
  await createDatabases(BENCH_DB);
  const services = await openServices(
    loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: BENCH_DB,
      LOG_LEVEL: 'silent',
      REDIS_PREFIX: 'bench',
      SEED_DEMO_DATA: 'false',
    }),
  );
  await migrate(services.orm);
  const stockroom = await startServer(services, 0);
  const bare = express();
  bare.get('/api/health', (_req, res) => res.json({ status: 'ok', timestamp: Date.now() }));
  const bareServer: Server = await new Promise(resolve => {
    const s = bare.listen(0, () => resolve(s));
  });
  const barePort = (bareServer.address() as { port: number }).port;
  try {
    const baseline = await load(`http://127.0.0.1:${barePort}/api/health`, { seconds: 4 });
    const ours = await load(`http://127.0.0.1:${stockroom.port}/api/health`, { seconds: 4 });
    printTable('GET /api/health: full middleware stack vs bare Express', [
      {
        target: 'bare express',
        'req/s': baseline.requestsPerSecond,
        'p50 ms': baseline.p50,
        'p99 ms': baseline.p99,
      },
      { target: 'stockroom', 'req/s': ours.requestsPerSecond, 'p50 ms': ours.p50, 'p99 ms': ours.p99 },
      { target: 'ratio stockroom/bare', 'req/s': ratio(ours.requestsPerSecond, baseline.requestsPerSecond) },
    ]);
  } finally {
    await new Promise(resolve => bareServer.close(resolve));
    await stockroom.stop();
    await closeServices(services);
  }
}

await runScript(async () => {
  holdMachineForBench();
  await benchPipeline();
  await benchInventory();
  // The outbox consumers: drain rate with one and two worker processes, lag at half the max write rate.
  await benchEventPipeline();
  const products = await benchProducts();
  printTable('Products: one 1,000-row batch update vs 1,000 single quantity updates', [products]);
  // Loads 10^4 and 10^6 history rows and rebuilds the rollups: takes several minutes.
  if (process.env.BENCH_SKIP_ANALYTICS !== 'true') await benchAnalytics();
  // bench:csv: exports 10^6 history rows (CSV and JSON), receives an upload just under IMPORT_MAX_BYTES and
  // imports 10^4-10^6 six-column rows: takes several minutes.
  if (process.env.BENCH_SKIP_CSV !== 'true') await benchCsv();
});
