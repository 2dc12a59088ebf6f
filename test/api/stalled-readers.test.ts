import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { startTestApp, type TestApp, resetTestDatabase } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';
import { createUser, type TestUser } from '../support/users.js';
import { openStalledReader, seedLargeAnswers, type StalledReader } from '../support/stalled-reader.js';
import { waitFor } from '../support/wait-for.js';
import { freePort } from '../support/ports.js';

/** A database of its own: answers of several MB (see stalled-reader.ts) would slow the other suites' lists. */
const DATABASE_URL = `${TEST_DATABASE_URL}_stalled`;
const ROWS = 20_000;
const IDLE_MS = 6000;
const PER_USER = 2;
/** The counted streams' pool of each process: three connections per slot (config/services.ts). */
const STREAM_POOL = PER_USER * 3;
/** The unpaged lists' pool of each process (config/services.ts). */
const LIST_POOL = 8;

/** Backends of a stream pool that are running a query or holding a transaction open. */
async function busyBackends(app: TestApp, applicationName: string): Promise<number> {
  const [row] = await app.services.orm.em.fork().execute<{ n: string }[]>(
    `select count(*) as n from pg_stat_activity
      where application_name = ? and datname = current_database() and state <> 'idle'`,
    [applicationName],
  );
  return Number(row.n);
}

describe('Stalled readers of streamed answers (STREAM_IDLE_TIMEOUT_MS, STREAMS_PER_USER, spooled answers)', function () {
  this.timeout(120000);
  // Two web processes of one deployment: same database, same Redis prefix.
  let web1: TestApp;
  let web2: TestApp;
  const readers: StalledReader[] = [];

  const stall = async (app: TestApp, path: string, user?: TestUser) => {
    const reader = await openStalledReader(app.server.port, path, user ? { Authorization: user.auth } : {});
    readers.push(reader);
    return reader;
  };
  /** No connection of either stream pool waits for the stalled readers: their answers are in files. */
  const noConnectionHeld = async (app: TestApp) =>
    expect(
      (await busyBackends(app, 'stockroom-stream')) + (await busyBackends(app, 'stockroom-list')),
    ).to.equal(0);
  const allCut = async (app: TestApp, held: StalledReader[]) => {
    await noConnectionHeld(app);
    await waitFor(
      async () => app.services.spool.usedBytes === 0,
      IDLE_MS * 3,
      'the stalled streams to be cut and their spooled answers deleted',
    );
    for (const reader of held) {
      const end = await reader.drain();
      expect(end.complete, 'a cut answer is truncated').to.equal(false);
    }
  };

  before(async () => {
    await resetTestDatabase(DATABASE_URL);
    const env = {
      DATABASE_URL,
      REDIS_PREFIX: `stall${randomBytes(4).toString('hex')}`,
      STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS),
      STREAMS_PER_USER: String(PER_USER),
    };
    web1 = await startTestApp(env);
    web2 = await startTestApp(env, { migrate: false });
    await seedLargeAnswers(web1.services, ROWS);
  });
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });
  after(async () => {
    await web1?.close();
    await web2?.close();
  });

  it('When a user holds STREAMS_PER_USER stalled streams on one process, then another is 429 on every process, while lists, other users and /api/me still answer; after the idle timeout the readers are cut, their connections released and the slots free', async () => {
    const user = await createUser(web1.services);
    const other = await createUser(web1.services);
    const held = [
      await stall(web1, '/api/stock-history/export.csv', user),
      await stall(web1, '/api/stock-history', user),
    ];
    expect(held.map(r => r.status)).to.deep.equal([200, 200]);

    for (const [app, path] of [
      [web2, '/api/inventory/export.csv'],
      [web1, '/api/stock-history'],
      [web2, '/api/products/export.csv'],
    ] as const) {
      const refused = await request(app.server.server).get(path).set('Authorization', user.auth).expect(429);
      expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
      expect(refused.body.error).to.equal('too_many_requests');
    }
    // Lists are not counted, and the pool is larger than one user's bound.
    for (const path of ['/api/inventory', '/api/suppliers', '/api/products', '/api/me'])
      await request(web2.server.server).get(path).set('Authorization', user.auth).expect(200);
    const export_ = await request(web1.server.server)
      .get('/api/stock-history/export.csv?itemName=Stalled%20item%2017%20')
      .set('Authorization', other.auth)
      .expect(200);
    expect(export_.text.split('\r\n').filter(Boolean)).to.have.length(2);

    await allCut(web1, held);
    await request(web2.server.server)
      .get('/api/inventory/export.csv?name=Stalled%20item%2042%20')
      .set('Authorization', user.auth)
      .expect(200);
  });

  it('When more readers stall exports and lists than the stream pools have connections, then none holds a connection: the next stream and the lists still answer at once', async () => {
    const users = await Promise.all(
      Array.from({ length: STREAM_POOL / PER_USER + 2 }, () => createUser(web1.services)),
    );
    const held: StalledReader[] = [];
    for (let i = 0; i < STREAM_POOL; i += 1)
      held.push(await stall(web1, '/api/stock-history/export.csv', users[Math.floor(i / PER_USER)]));
    for (let i = 0; i < LIST_POOL + 1; i += 1) held.push(await stall(web1, '/api/inventory', users.at(-2)));
    expect(held.every(r => r.status === 200)).to.equal(true);
    await noConnectionHeld(web1);

    await request(web1.server.server)
      .get('/api/stock-history/export.csv?itemName=none')
      .set('Authorization', users.at(-1)!.auth)
      .expect(200);
    for (const path of ['/api/inventory', '/api/suppliers', '/api/products'])
      await request(web1.server.server).get(path).set('Authorization', users.at(-1)!.auth).expect(200);

    await allCut(web1, held);
  });

  it('When a user stalls more unpaged item lists than STREAMS_PER_USER, then none is refused, and each is cut after the idle timeout', async () => {
    const user = await createUser(web1.services);
    const held: StalledReader[] = [];
    for (let i = 0; i < PER_USER + 1; i += 1) held.push(await stall(web1, '/api/inventory', user));
    expect(held.map(r => r.status)).to.deep.equal([200, 200, 200]);
    await allCut(web1, held);
  });

  it('When a process starts, then it sweeps the spool files of processes that no longer run; when an answer would exceed its disk budget, then it is 503 with Retry-After before a byte is sent, and smaller answers still come', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'stockroom-spool-test-'));
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(path.join(dir, `${gone}-left-by-a-crash`), 'x');
    writeFileSync(path.join(dir, `${process.pid}-of-a-live-process`), 'x');
    const small = await startTestApp(
      { DATABASE_URL, STREAM_SPOOL_DIR: dir, STREAM_SPOOL_MAX_MB: '1' },
      { migrate: false },
    );
    try {
      expect(readdirSync(dir)).to.deep.equal([`${process.pid}-of-a-live-process`]);
      const user = await createUser(small.services);
      for (const route of ['/api/inventory', '/api/stock-history/export.csv']) {
        const full = await request(small.server.server)
          .get(route)
          .set('Authorization', user.auth)
          .expect(503);
        expect(Number(full.headers['retry-after'])).to.be.at.least(1);
        expect(full.headers['content-disposition']).to.equal(undefined);
        expect(full.body).to.include({ error: 'service_unavailable', messageKey: 'error.streams.busy' });
      }
      expect(small.services.spool.usedBytes).to.equal(0);
      await request(small.server.server).get('/api/suppliers').set('Authorization', user.auth).expect(200);
      await request(small.server.server)
        .get('/api/stock-history/export.csv?itemName=none')
        .set('Authorization', user.auth)
        .expect(200);
    } finally {
      await small.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('When anonymous callers stall exports in demo mode, then they are counted per client address', async () => {
    const demo = await startTestApp(
      {
        DATABASE_URL,
        APP_DEMO_READONLY: 'true',
        STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS),
        STREAMS_PER_USER: String(PER_USER),
      },
      { migrate: false },
    );
    try {
      const held: StalledReader[] = [];
      for (let i = 0; i < PER_USER; i += 1) held.push(await stall(demo, '/api/inventory/export.csv'));
      expect(held.map(r => r.status)).to.deep.equal([200, 200]);
      const refused = await request(demo.server.server).get('/api/inventory/export.csv').expect(429);
      expect(refused.body).to.include({ error: 'too_many_requests', messageKey: 'error.too.many.streams' });
      await allCut(demo, held);
    } finally {
      await demo.close();
    }
  });

  it('When Redis cannot be reached, then each process still bounds the streams per user on its own', async () => {
    const alone = await startTestApp(
      {
        DATABASE_URL,
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS),
        STREAMS_PER_USER: String(PER_USER),
      },
      { migrate: false },
    );
    try {
      const user = await createUser(alone.services);
      const held: StalledReader[] = [];
      for (let i = 0; i < PER_USER; i += 1) held.push(await stall(alone, '/api/stock-history', user));
      expect(held.map(r => r.status)).to.deep.equal([200, 200]);
      const refused = await request(alone.server.server)
        .get('/api/stock-history/export.csv')
        .set('Authorization', user.auth)
        .expect(429);
      expect(refused.body).to.include({ error: 'too_many_requests', messageKey: 'error.too.many.streams' });
      await allCut(alone, held);
      await request(alone.server.server)
        .get('/api/stock-history/export.csv?itemName=none')
        .set('Authorization', user.auth)
        .expect(200);
    } finally {
      await alone.close();
    }
  });
});
