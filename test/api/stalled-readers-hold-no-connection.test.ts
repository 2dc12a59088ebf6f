import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { startTestApp, type TestApp, resetTestDatabase } from '../support/test-app.js';
import { TEST_DATABASE_URL, testEnv } from '../support/test-env.js';
import { createUser, type TestUser } from '../support/users.js';
import { openStalledReader, seedLargeAnswers, type StalledReader } from '../support/stalled-reader.js';
import { freePort } from '../support/ports.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';

/** A database of its own: answers of several MB (see stalled-reader.ts) would slow the other suites' lists. */
const DATABASE_URL = `${TEST_DATABASE_URL}_stalled_pools`;
const ROWS = 20_000;
/** Long enough that every reader stays stalled (not cut) for the whole observation. */
const IDLE_MS = 20000;
const PER_USER = 2;
/** The figures: 12 stalled unpaged lists of one USER, 3 users x 2 stalled exports. */
const STALLED_LISTS = 12;
const EXPORTERS = 3;
/** The bounds of the rule (issue 39): every other user is answered within 3 s, no transaction lives 5 s. */
const ANSWER_WITHIN_MS = 3000;
const OLDEST_TRANSACTION_MS = 5000;

const EXPORTS = ['/api/inventory/export.csv', '/api/stock-history/export.csv', '/api/products/export.csv'];
/**
 * What another user reads meanwhile: every list and export, filtered to a few rows where it can be, so that
 * the time each takes is the wait for a connection and not the transfer of megabytes on a busy machine.
 */
const PROBES = [
  '/api/suppliers',
  '/api/products',
  `/api/stock-history/item/${randomUUID()}`,
  `/api/inventory/export.csv?name=${encodeURIComponent('Stalled item 42 ')}`,
  '/api/stock-history/export.csv?startDate=2026-01-01T00:00:10Z&endDate=2026-01-01T00:00:20Z',
  '/api/products/export.csv',
];

type WebProcess = ChildProcess & { output: () => string };

describe('Stalled clients hold no database connection (a connection is held only while PostgreSQL produces rows)', function () {
  this.timeout(240000);
  let app: TestApp;
  const env = {
    DATABASE_URL,
    REDIS_PREFIX: `stallpool${randomBytes(4).toString('hex')}`,
    STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS),
    STREAMS_PER_USER: String(PER_USER),
  };
  const processes: WebProcess[] = [];
  const ports: number[] = [];
  const readers: StalledReader[] = [];

  /** Transactions of this database's Stockroom connections (every pool of a web process) older than the bound. */
  const oldTransactions = async (): Promise<string[]> => {
    const rows = await app.services.orm.em.fork().execute<{ application_name: string; age_ms: string }[]>(
      `select application_name, (extract(epoch from now() - xact_start) * 1000)::bigint as age_ms
         from pg_stat_activity
        where datname = current_database() and application_name like 'stockroom%' and xact_start is not null
          and xact_start < now() - make_interval(secs => ? / 1000.0)`,
      [OLDEST_TRANSACTION_MS],
    );
    return rows.map(r => `${r.application_name}: ${r.age_ms} ms`);
  };

  const stall = async (port: number, path: string, user: TestUser) => {
    const reader = await openStalledReader(port, path, { Authorization: user.auth });
    readers.push(reader);
    expect(reader.status, `${path}: ${reader.firstChunk.slice(0, 300)}`).to.equal(200);
    return reader;
  };

  /** Reads `path` whole as `user`: its status and how long it took. */
  const timedRead = async (port: number, path: string, user: TestUser) => {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { Authorization: user.auth } });
    await res.arrayBuffer();
    return { path, port, status: res.status, ms: Math.round(performance.now() - started) };
  };

  /**
   * On `stallOn` (one process, or each of several): 12 stalled unpaged item lists of one USER; 3 users with 2
   * stalled exports each, spread over the processes. Then every other user's lists and exports answer 200
   * within 3 s on every process, and no transaction of a web process gets older than 5 s while the readers
   * stall (watched until they have stalled for longer than that).
   */
  async function stallAndProbe(stallOn: number[]) {
    const lister = await createUser(app.services);
    const exporters = await Promise.all(Array.from({ length: EXPORTERS }, () => createUser(app.services)));
    const other = await createUser(app.services);
    for (const port of stallOn)
      for (let i = 0; i < STALLED_LISTS; i += 1) await stall(port, '/api/inventory', lister);
    for (const [n, exporter] of exporters.entries())
      for (let i = 0; i < PER_USER; i += 1)
        await stall(stallOn[(n + i) % stallOn.length], EXPORTS[i], exporter);
    const stalledAt = performance.now();

    const seen: string[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching || performance.now() - stalledAt <= OLDEST_TRANSACTION_MS + 1000) {
        seen.push(...(await oldTransactions()));
        await new Promise(resolve => setTimeout(resolve, 200));
      }
    })();
    try {
      const answers = [];
      for (const port of ports) for (const path of PROBES) answers.push(await timedRead(port, path, other));
      const slow = answers.filter(a => a.status !== 200 || a.ms > ANSWER_WITHIN_MS);
      expect(slow, 'answers to another user while the readers stall').to.deep.equal([]);
    } finally {
      watching = false;
      await watch;
    }
    expect(seen, 'transactions of a web process older than 5 s').to.deep.equal([]);
  }

  before(async () => {
    await resetTestDatabase(DATABASE_URL);
    app = await startTestApp(env);
    await seedLargeAnswers(app.services, ROWS);
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      processes.push(spawnStockroom(['--web'], testEnv({ ...env, PORT: String(port) })));
      ports.push(port);
    }
    await Promise.all(ports.map(port => waitForHttp(`http://127.0.0.1:${port}/api/health`, 60000)));
  });
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });
  after(async () => {
    for (const child of processes) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await waitForExit(child, 30000).catch(() => child.kill('SIGKILL'));
    }
    await app?.close();
  });

  it('When one web process has 12 stalled unpaged lists of one user and 3 users x 2 stalled exports, then every other user is answered 200 within 3 s and no transaction of a web process is older than 5 s', async () => {
    await stallAndProbe([ports[0]]);
  });

  it('When two web processes each have 12 stalled unpaged lists of one user and the stalled exports are spread over both, then the same holds on both', async () => {
    await stallAndProbe(ports);
  });
});
