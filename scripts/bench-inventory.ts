import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import express from 'express';
import pg from 'pg';
import autocannon from 'autocannon';
import { loadConfig } from '../config/env.js';
import { closeServices, openServices, type Services } from '../config/services.js';
import { migrate } from '../config/database.js';
import { startServer } from '../api/server.js';
import { startWorkers } from '../workers/main.js';
import { createDatabases } from './create-databases.js';
import { issueToken } from '../domain/users/tokens.js';
import { ITEM_COLUMNS, ITEM_FROM, toItemView, type ItemRow } from '../domain/inventory/item.view.js';
import { runScript } from './run-script.js';

/**
 * Inventory benchmark (figures, never assertions), on the `stockroom_bench` database (BENCH_DATABASE_URL):
 * 1. GET item by id: Stockroom (auth + validation + raw query) vs a bare Express + pg route doing the same query;
 * 2. adjust quantity: Stockroom (PATCH, guarded update + outbox row, after-commit enqueue) vs a bare Express +
 *    pg route running the same UPDATE + INSERT in a transaction; 50 items, so it measures the write path, not
 *    one hot row;
 * 3. commit -> consumer lag (outbox created_at -> each consumer's marker: history, analytics, alerts) at half
 *    Stockroom's max write rate,
 *    with the workers in their own process (the Procfile layout; BENCH_INPROCESS_WORKERS=1 for `npm start`'s).
 */
export async function benchInventory(): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom_bench';
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  await createDatabases(databaseUrl);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: `bench-inv-${randomUUID().slice(0, 8)}`,
    LOG_LEVEL: 'silent',
    RUN_WORKERS: 'false',
    SEED_DEMO_DATA: 'false',
    OUTBOX_SWEEP_INTERVAL_MS: '1000',
  });
  const services = await openServices(config);
  const bare = new pg.Pool({ connectionString: databaseUrl, max: config.dbPoolMax });
  const servers: Server[] = [];
  try {
    await migrate(services.orm);
    const { auth, itemIds } = await seed(services);
    const stockroom = await startServer(services, 0);
    const base = `http://127.0.0.1:${stockroom.port}`;
    const barePort = await startBare(bare, servers);
    const bareBase = `http://127.0.0.1:${barePort}`;
    const headers = { authorization: auth };
    const pick = () => itemIds[Math.floor(Math.random() * itemIds.length)];

    const line = (label: string, ours: number, theirs: number) =>
      console.log(
        `${label.padEnd(34)} stockroom ${ours.toFixed(0).padStart(6)}   bare ${theirs.toFixed(0).padStart(6)}   ratio ${(ours / theirs).toFixed(2)}`,
      );

    console.log(
      `inventory bench on ${new URL(databaseUrl).pathname.slice(1)}, ${seconds} s per run, 50 connections`,
    );
    const skip = Boolean(process.env.BENCH_LAG_RATE);
    const readOurs = skip
      ? { rate: 1, failures: 0 }
      : await load({ url: `${base}/api/inventory/${itemIds[0]}`, headers, seconds });
    const readBare = skip
      ? { rate: 1, failures: 0 }
      : await load({ url: `${bareBase}/item/${itemIds[0]}`, seconds });
    line('GET item by id (req/s)', readOurs.rate, readBare.rate);

    const writeOurs = skip
      ? { rate: Number(process.env.BENCH_LAG_RATE) * 2, failures: 0 }
      : await load({
          url: base,
          headers,
          seconds,
          method: 'PATCH',
          path: () => `/api/inventory/${pick()}/quantity?delta=1&reason=RESTOCK`,
        });
    const writeBare = skip
      ? { rate: 1, failures: 0 }
      : await load({
          url: bareBase,
          seconds,
          method: 'PATCH',
          path: () => `/adjust/${pick()}?delta=1`,
        });
    line('adjust quantity (tx/s)', writeOurs.rate, writeBare.rate);
    if (writeOurs.failures + writeBare.failures + readOurs.failures + readBare.failures > 0)
      console.log(
        `non-2xx/errors: read ${readOurs.failures}/${readBare.failures}, write ${writeOurs.failures}/${writeBare.failures}`,
      );

    const workers = process.env.BENCH_INPROCESS_WORKERS
      ? startWorkers(services, { clock: false })
      : await startWorkerProcess({ DATABASE_URL: databaseUrl, REDIS_PREFIX: config.redisPrefix });
    try {
      await drain(services);
      const [{ max }] = await services.orm.em
        .fork()
        .execute<{ max: string }[]>('select coalesce(max(id), 0) as max from outbox_event');
      const rate = Math.max(1, Math.floor(writeOurs.rate / 2));
      const lagRun = await load({
        url: base,
        headers,
        seconds,
        method: 'PATCH',
        rate,
        path: () => `/api/inventory/${pick()}/quantity?delta=1&reason=RESTOCK`,
      });
      await drain(services);
      const lags = await services.orm.em
        .fork()
        .execute<{ consumer: string; n: string; p50: string; p99: string; max: string }[]>(
          `select c.consumer, count(*) as n,
                percentile_cont(0.5) within group (order by c.ms) as p50,
                percentile_cont(0.99) within group (order by c.ms) as p99, max(c.ms) as max
         from outbox_event o
         cross join lateral (values
           ('history', extract(epoch from o.history_done_at - o.created_at) * 1000),
           ('analytics', extract(epoch from o.analytics_done_at - o.created_at) * 1000),
           ('alerts', extract(epoch from o.alerts_done_at - o.created_at) * 1000)) as c(consumer, ms)
         where o.id > ? and o.type = 'stock.changed'
         group by c.consumer order by c.consumer desc`,
          [max],
        );
      for (const lag of lags)
        console.log(
          `commit -> ${lag.consumer} lag at ${rate} writes/s (${lagRun.rate.toFixed(0)} achieved, ${lag.n} events): ` +
            `p50 ${Number(lag.p50).toFixed(1)} ms, p99 ${Number(lag.p99).toFixed(1)} ms, max ${Number(lag.max).toFixed(1)} ms`,
        );
      if (process.env.BENCH_DEBUG)
        for (const queue of ['stock-history', 'analytics', 'low-stock-alerts'] as const) {
          const jobs = await services.queues.queue(queue).getJobs(['completed'], 0, 1000);
          const q = (f: (j: (typeof jobs)[number]) => number) => {
            const v = jobs.map(f).sort((a, b) => a - b);
            return `p50 ${v[Math.floor(v.length / 2)]} p99 ${v[Math.floor(v.length * 0.99)]}`;
          };
          console.log(
            queue,
            'wait',
            q(j => (j.processedOn ?? 0) - j.timestamp),
            'run',
            q(j => (j.finishedOn ?? 0) - (j.processedOn ?? 0)),
          );
        }
    } finally {
      await workers.close();
    }
    await stockroom.stop();
  } finally {
    for (const server of servers) server.close();
    await bare.end();
    await closeServices(services);
  }
}

async function seed(services: Services): Promise<{ auth: string; itemIds: string[] }> {
  const em = services.orm.em.fork();
  const username = `bench-${randomUUID().slice(0, 8)}`;
  await em.execute(`insert into app_user (username, email, full_name, role) values (?, ?, ?, 'ROLE_ADMIN')`, [
    username,
    `${username}@bench.test`,
    'Bench admin',
  ]);
  const token = await issueToken({ sub: username, role: 'ROLE_ADMIN' }, services.config.jwtSecret, 3600);
  const [supplier] = await em.execute<{ id: string }[]>(
    `insert into supplier (name, created_by) values (?, ?) returning id`,
    [`Bench supplier ${username}`, username],
  );
  const itemIds: string[] = [];
  for (let i = 0; i < 50; i++) {
    const [item] = await em.execute<{ id: string }[]>(
      `insert into inventory_item (name, quantity, price, supplier_id, created_by) values (?, 1000, 9.99, ?, ?) returning id`,
      [`Bench item ${username} ${i}`, supplier.id, username],
    );
    itemIds.push(item.id);
  }
  return { auth: `Bearer ${token}`, itemIds };
}

/** The Procfile `worker` line: workers (and the outbox sweeper) in their own process. */
async function startWorkerProcess(env: Record<string, string>): Promise<{ close(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start-all.ts', '--worker'], {
    env: { ...process.env, NODE_ENV: 'test', SEED_DEMO_DATA: 'false', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.once('exit', () => reject(new Error('worker process exited during start-up')));
    child.stdout.on('data', (chunk: Buffer) => {
      if (seen === 'done') return;
      seen += chunk.toString();
      if (seen.includes('"workers started"')) {
        seen = 'done';
        resolve();
      }
    });
  });
  return {
    close: async () => {
      const exited = new Promise(resolve => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The comparison: bare Express + pg, same SQL, no auth, no validation, no ORM. */
async function startBare(pool: pg.Pool, servers: Server[]): Promise<number> {
  const app = express();
  app.get('/item/:id', async (req, res) => {
    const { rows } = await pool.query<ItemRow>(`select ${ITEM_COLUMNS} from ${ITEM_FROM} where i.id = $1`, [
      req.params.id,
    ]);
    if (rows.length === 0) res.status(404).end();
    else res.json(toItemView(rows[0]));
  });
  app.patch('/adjust/:id', async (req, res) => {
    const delta = Number(req.query.delta);
    const client = await pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query<{ id: string; name: string; quantity: number }>(
        'update inventory_item set quantity = quantity + $1, version = version + 1, updated_at = now() where id = $2 and quantity + $1 >= 0 returning id, name, quantity',
        [delta, req.params.id],
      );
      await client.query(
        `insert into outbox_event (type, aggregate_id, payload) values ('bench.bare', $1, $2::jsonb)`,
        [
          req.params.id,
          JSON.stringify({
            itemId: req.params.id,
            itemName: rows[0]?.name,
            change: delta,
            quantityAfter: rows[0]?.quantity,
          }),
        ],
      );
      await client.query('commit');
      res.json(rows[0]);
    } catch (error) {
      await client.query('rollback');
      throw error;
    } finally {
      client.release();
    }
  });
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

async function load(options: {
  url: string;
  seconds: number;
  headers?: Record<string, string>;
  method?: 'GET' | 'PATCH';
  path?: () => string;
  rate?: number;
}): Promise<{ rate: number; failures: number }> {
  const path = options.path;
  const result = await autocannon({
    url: options.url,
    connections: 50,
    duration: options.seconds,
    method: options.method ?? 'GET',
    headers: options.headers,
    ...(options.rate ? { overallRate: options.rate } : {}),
    ...(path ? { requests: [{ setupRequest: (req: any) => ({ ...req, path: path() }) }] } : {}),
  });
  return { rate: result.requests.average, failures: result.non2xx + result.errors + result.timeouts };
}

/** Waits until the stock-history consumer has nothing pending (bench events included). */
async function drain(services: Services, timeoutMs = 120000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await services.orm.em
      .fork()
      .execute<{ n: string }[]>(
        'select count(*) as n from outbox_event where history_done_at is null or analytics_done_at is null or alerts_done_at is null',
      );
    if (Number(row.n) === 0 || Date.now() > deadline) return;
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runScript(benchInventory);
