import { readdir, readFile, readlink } from 'node:fs/promises';
import { expect } from 'chai';
import pg from 'pg';
import { TEST_DATABASE_URL, testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';
import { startupFailure } from '../support/startup-failure.js';
import { freePort } from '../support/ports.js';
import { api, testApp } from '../setup/hooks.js';
import { createUser } from '../support/users.js';
import { inLanes, newItem, newSupplier } from '../support/inventory.js';
import { waitFor } from '../support/wait-for.js';

const POSTGRES_PORT = Number(new URL(TEST_DATABASE_URL).port || 5432);

/** The local TCP ports of the sockets process `pid` holds open to PostgreSQL (Linux: /proc). */
async function postgresSocketPorts(pid: number): Promise<Set<number>> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]);
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    const text = await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || !inodes.has(fields[9])) continue;
      const [, localPort] = fields[1].split(':');
      const [, remotePort] = fields[2].split(':');
      if (parseInt(remotePort, 16) === POSTGRES_PORT) ports.add(parseInt(localPort, 16));
    }
  }
  return ports;
}

/**
 * The backends in pg_stat_activity whose client is one of the process's sockets: the connections it holds,
 * as the server counts them against its limit.
 */
async function heldConnections(db: pg.Client, pid: number): Promise<number> {
  const ports = await postgresSocketPorts(pid);
  if (ports.size === 0) return 0;
  const { rows } = await db.query<{ n: number }>(
    'select count(*)::int as n from pg_stat_activity where client_port = any($1::int[])',
    [[...ports]],
  );
  return rows[0].n;
}

describe('DB_CONNECTIONS_MAX: the PostgreSQL connections of one process', function () {
  this.timeout(120000);

  it('When a web process with DB_CONNECTIONS_MAX=6 serves concurrent lists, exports and writes, then it never holds more than 6 connections, logs its split, and answers every request correctly (200, or 503 with Retry-After; never 500)', async () => {
    const admin = await createUser(testApp().services, 'ROLE_ADMIN', 'connections');
    const supplier = await newSupplier(api(), admin.auth);
    const items = await inLanes(4, 4, () => newItem(api(), admin.auth, supplier.id, { quantity: 100 }));

    const port = await freePort();
    const child = spawnStockroom(
      ['--web'],
      testEnv({
        PORT: String(port),
        LOG_LEVEL: 'info',
        DB_CONNECTIONS_MAX: '6',
        // The per-user stream slots are not what is tested here: the connections are.
        STREAMS_PER_USER: '100',
      }),
    );
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    let sampling = true;
    let most = 0;
    const sampler = (async () => {
      while (sampling) most = Math.max(most, await heldConnections(db, child.pid!));
    })();
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForHttp(`${base}/api/health`, 60000);
      const line = child
        .output()
        .split('\n')
        .map(l => (l.startsWith('{') ? (JSON.parse(l) as Record<string, any>) : {}))
        .find(r => r.msg === 'PostgreSQL connections this process may hold');
      expect(line?.connectionsMax, child.output()).to.equal(6);
      expect(line?.connections).to.deep.include({ total: 6, listen: 1, consumers: 0, rebuild: 0 });
      expect(line?.connections.orm + line?.connections.lists + line?.connections.streams).to.equal(5);

      const headers = { Authorization: admin.auth };
      const kinds = ['list', 'export', 'write', 'write', 'suppliers'] as const;
      const answers = await inLanes(60, 30, async i => {
        const kind = kinds[i % kinds.length];
        const item = items[i % items.length];
        const res =
          kind === 'list'
            ? await fetch(`${base}/api/inventory`, { headers })
            : kind === 'export'
              ? await fetch(`${base}/api/inventory/export.csv`, { headers })
              : kind === 'suppliers'
                ? await fetch(`${base}/api/suppliers`, { headers })
                : await fetch(`${base}/api/inventory/${item.id}/quantity?delta=1&reason=RETURN`, {
                    method: 'PATCH',
                    headers,
                  });
        return {
          kind,
          item,
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          body: await res.text(),
        };
      });

      for (const answer of answers) {
        expect([200, 503], `${answer.kind}: ${answer.status} ${answer.body}`).to.include(answer.status);
        if (answer.status === 503) expect(answer.retryAfter, answer.kind).to.match(/^\d+$/);
      }
      for (const answer of answers.filter(a => a.status === 200)) {
        if (answer.kind === 'list') {
          const ids = (JSON.parse(answer.body) as { id: string }[]).map(i => i.id);
          expect(ids).to.include.members(items.map(i => i.id));
        }
        if (answer.kind === 'export') for (const item of items) expect(answer.body).to.contain(item.name);
      }
      expect(answers.filter(a => a.status === 200).length).to.be.greaterThan(answers.length / 2);
      for (const item of items) {
        const written = answers.filter(a => a.kind === 'write' && a.item.id === item.id && a.status === 200);
        const res = await fetch(`${base}/api/inventory/${item.id}`, { headers });
        expect(((await res.json()) as { quantity: number }).quantity).to.equal(100 + written.length);
      }
      await waitFor(() => most > 0, 5000, 'a sample of the connections');
      expect(most, 'PostgreSQL connections held by the web process').to.be.within(1, 6);
      child.kill('SIGTERM');
      expect(await waitForExit(child, 30000), child.output()).to.equal(0);
    } finally {
      sampling = false;
      await sampler.catch(() => undefined);
      await db.end();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('When DB_POOL_MAX and the pools a web process needs beside it exceed DB_CONNECTIONS_MAX, then it refuses to start with one line naming both', async () => {
    const failure = await startupFailure(
      spawnStockroom(
        ['--web'],
        testEnv({ DB_CONNECTIONS_MAX: '6', DB_POOL_MAX: '10', PORT: String(await freePort()) }),
      ),
    );
    expect(failure.code, failure.output).to.equal(2);
    expect(failure.lines, failure.output).to.have.length(1);
    expect(failure.lines[0]).to.contain('DB_CONNECTIONS_MAX').and.contain('DB_POOL_MAX 10').and.contain('13');
  });

  it('When a worker process is given fewer connections than its rollup rebuild and pools need, then it refuses to start', async () => {
    const failure = await startupFailure(spawnStockroom(['--worker'], testEnv({ DB_CONNECTIONS_MAX: '6' })));
    expect(failure.code, failure.output).to.equal(2);
    expect(failure.lines, failure.output).to.have.length(1);
    expect(failure.lines[0]).to.match(/DB_CONNECTIONS_MAX.*is 6.*worker process needs at least 7/);
  });
});
