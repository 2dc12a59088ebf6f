import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabases } from '../create-databases.js';
import { issueToken } from '../../domain/users/tokens.js';
import {
  runLoad,
  runRelease,
  startProcfileProcess,
  waitUntilServing,
  type BenchProcess,
  type LoadResult,
} from './processes.js';
import { TestPostgres } from '../../test/support/processes.js';
import { freePort } from '../../test/support/ports.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * The replica run of the inventory bench (figures, never assertions): a primary and a streaming replica of its
 * own (initdb + `pg_basebackup -R` on spare ports), two web processes (Procfile line) on the primary, one with
 * DATABASE_REPLICA_URL and one without. Alternating rounds: analytics reads (stock per supplier, the analytics summary) at full speed by a user
 * who does not write, while another user writes BENCH_REPLICA_WRITES (200) adjustments/s paced; prints the read
 * rate and p99 of each side and their ratio. On one machine the replica shares the cores with the primary, so
 * this shows what the routing costs and what moving the reads off the primary's backends gives, not capacity.
 */
export async function benchReplicaReads(options: { rounds: number; seconds: number; connections: number }) {
  const logDir = mkdtempSync(path.join(tmpdir(), 'stockroom-bench-replica-'));
  const primary = new TestPostgres(await freePort());
  const replica = new TestPostgres(await freePort());
  const processes: BenchProcess[] = [];
  try {
    await primary.init();
    await primary.start();
    await createDatabases(primary.url);
    await replica.initReplicaOf(primary);
    await replica.start();
    const jwtSecret = randomBytes(32).toString('hex');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: primary.url,
      REDIS_PREFIX: `bench-replica-${randomUUID().slice(0, 8)}`,
      SESSION_SECRET: randomBytes(24).toString('hex'),
      JWT_SECRET: jwtSecret,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      SEED_DEMO_DATA: 'false',
      RUN_WORKERS: 'false',
    };
    await runRelease(env, path.join(logDir, 'release.log'));
    const db = new pg.Pool({ connectionString: primary.url, max: 2 });
    const { writer, reader, itemIds } = await seed(db);
    await db.end();
    const token = (sub: string) => issueToken({ sub, role: 'ROLE_USER' }, jwtSecret, 3600);
    const [writeAuth, readAuth] = [`Bearer ${await token(writer)}`, `Bearer ${await token(reader)}`];

    const sides = { replica: await freePort(), primary: await freePort() };
    for (const [side, port] of Object.entries(sides)) {
      const web = startProcfileProcess(
        'web',
        {
          ...env,
          PORT: String(port),
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          ...(side === 'replica' ? { DATABASE_REPLICA_URL: replica.url } : {}),
        },
        path.join(logDir, `web-${side}.log`),
      );
      processes.push(web);
      await waitUntilServing(web, `http://127.0.0.1:${port}/api/health`);
    }
    console.log(
      `\n## Replica reads: ${options.rounds} alternating rounds x ${options.seconds} s, analytics reads at full ` +
        `speed (${options.connections} connections) while ${writeRate()} writes/s run; logs in ${logDir}`,
    );
    const results: Record<keyof typeof sides, LoadResult[]> = { replica: [], primary: [] };
    for (let round = 0; round <= options.rounds; round++) {
      const order = round % 2 === 0 ? (['replica', 'primary'] as const) : (['primary', 'replica'] as const);
      for (const side of order) {
        const url = `http://127.0.0.1:${sides[side]}`;
        const [read] = await Promise.all([
          runLoad({
            url,
            paths: ['/api/analytics/stock-per-supplier', '/api/analytics/summary'],
            headers: { authorization: readAuth },
            connections: options.connections,
            seconds: options.seconds,
          }),
          runLoad({
            url,
            paths: itemIds.map(id => `/api/inventory/${id}/quantity?delta=1&reason=RESTOCK`),
            method: 'PATCH',
            headers: { authorization: writeAuth },
            connections: 10,
            seconds: options.seconds,
            rate: writeRate(),
            paced: true,
          }),
        ]);
        // Round 0 warms both sides up (connections, plans, the replica's lag polling) and is not counted.
        if (round === 0) continue;
        results[side].push(read);
        console.log(
          `  round ${round}: reads on the ${side.padEnd(7)} ${read.rate.toFixed(0).padStart(6)} req/s  p50 ` +
            `${read.p50} ms  p99 ${read.p99} ms${read.non2xx + read.errors > 0 ? `  (non-2xx ${read.non2xx}, errors ${read.errors})` : ''}`,
        );
      }
    }
    const metrics = await (await fetch(`http://127.0.0.1:${sides.replica}/metrics`)).text();
    const routed = [...metrics.matchAll(/stockroom_replica_routed_reads_total\{target="(\w+)"\} (\d+)/g)];
    console.log(`  where the replica side's reads ran: ${routed.map(m => `${m[1]} ${m[2]}`).join(', ')}`);
    const ratios = results.replica.map((r, i) => r.rate / results.primary[i].rate);
    console.log(
      `  analytics read rate, replica / primary: median ${median(ratios).toFixed(2)} (${ratios
        .map(r => r.toFixed(2))
        .join(', ')}); p99 median ${median(results.replica.map(r => r.p99))} against ${median(
        results.primary.map(r => r.p99),
      )} ms`,
    );
  } finally {
    await Promise.all(processes.map(p => p.stop(2000)));
    await replica.destroy();
    await primary.destroy();
  }
}

const writeRate = () => Number(process.env.BENCH_REPLICA_WRITES ?? 200);

/** A writer and a reader (who never writes, so read-your-writes never moves their reads), 50 items with history. */
async function seed(db: pg.Pool): Promise<{ writer: string; reader: string; itemIds: string[] }> {
  const [writer, reader] = ['writer', 'reader'].map(role => `bench-${role}-${randomUUID().slice(0, 8)}`);
  for (const username of [writer, reader])
    await db.query(
      `insert into app_user (username, email, full_name, role) values ($1, $2, $3, 'ROLE_USER')`,
      [username, `${username}@bench.test`, username],
    );
  const {
    rows: [supplier],
  } = await db.query<{ id: string }>(`insert into supplier (name, created_by) values ($1, $2) returning id`, [
    `Bench supplier ${writer}`,
    writer,
  ]);
  const { rows } = await db.query<{ id: string }>(
    `insert into inventory_item (name, quantity, price, supplier_id, created_by)
     select 'Bench item ' || $1 || ' ' || g, 1000, 9.99, $2, $1 from generate_series(1, 50) g returning id`,
    [writer, supplier.id],
  );
  return { writer, reader, itemIds: rows.map(r => r.id) };
}
