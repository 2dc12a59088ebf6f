import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { testApp } from '../setup/hooks.js';
import { testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit, waitForHttp } from '../support/spawn-stockroom.js';
import { freePort } from '../support/ports.js';
import { createUser, type TestUser } from '../support/users.js';

/** The contract's limit (product-api.md "Tokens", DESIGN.md "Auth"), measured from the commit. */
const LIMIT_MS = 100;

type Answer = { status: number; authorities?: string[] };

async function authorities(base: string, user: TestUser): Promise<Answer> {
  const res = await fetch(`${base}/api/me/authorities`, { headers: { authorization: user.auth } });
  return res.ok
    ? { status: res.status, authorities: (await res.json()) as string[] }
    : { status: res.status };
}

/**
 * Polls every process back to back (no pause) until `done` holds for each, and returns the time from
 * `since` (the commit) to the response that showed it, per process. Fails after two seconds.
 */
async function timeUntil(
  bases: string[],
  user: TestUser,
  since: number,
  done: (answer: Answer) => boolean,
): Promise<number[]> {
  return Promise.all(
    bases.map(async base => {
      for (;;) {
        const answer = await authorities(base, user);
        const elapsed = performance.now() - since;
        if (done(answer)) return elapsed;
        if (elapsed > 2000) throw new Error(`${base} still answers ${JSON.stringify(answer)} after 2 s`);
      }
    }),
  );
}

describe('Account changes reach every web process (account cache + LISTEN/NOTIFY)', function () {
  this.timeout(90000);
  const processes: (ChildProcess & { output: () => string })[] = [];
  const bases: string[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      processes.push(spawnStockroom(['--web'], testEnv({ PORT: String(port) })));
      bases.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(bases.map(base => waitForHttp(`${base}/api/health`, 60000)));
  });

  after(async () => {
    for (const child of processes) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await waitForExit(child, 15000).catch(() => child.kill('SIGKILL'));
    }
  });

  const sql = (text: string, params: unknown[]) => testApp().services.orm.em.fork().execute(text, params);

  /** Each process has served the user (so it is cached there) with the given authorities. */
  async function warm(users: TestUser[], expected: string[][]): Promise<void> {
    for (const base of bases)
      for (const [i, user] of users.entries())
        for (let n = 0; n < 3; n++)
          expect((await authorities(base, user)).authorities).to.deep.equal(expected[i]);
  }

  it('When a role changes and another account is deleted, then both processes answer the new role and 401 within 100 ms of the commit', async () => {
    const demoted = await createUser(testApp().services, 'ROLE_ADMIN', 'demoted');
    const doomed = await createUser(testApp().services, 'ROLE_USER', 'doomed');
    await warm([demoted, doomed], [['ROLE_ADMIN', 'ROLE_USER'], ['ROLE_USER']]);

    await sql(`update app_user set role = 'ROLE_USER' where id = ?`, [demoted.id]);
    const roleCommitted = performance.now();
    const roleTimes = await timeUntil(
      bases,
      demoted,
      roleCommitted,
      a => a.authorities?.join() === 'ROLE_USER',
    );

    await sql('delete from app_user where id = ?', [doomed.id]);
    const deleteCommitted = performance.now();
    const deleteTimes = await timeUntil(bases, doomed, deleteCommitted, a => a.status === 401);

    const report = `role change seen after ${roleTimes.map(t => t.toFixed(1)).join(' / ')} ms, deletion after ${deleteTimes.map(t => t.toFixed(1)).join(' / ')} ms`;
    console.log(`      ${report}`);
    for (const elapsed of [...roleTimes, ...deleteTimes]) expect(elapsed, report).to.be.at.most(LIMIT_MS);
    // And it stays that way (nothing stale is re-cached afterwards).
    for (const base of bases) {
      expect((await authorities(base, demoted)).authorities).to.deep.equal(['ROLE_USER']);
      expect((await authorities(base, doomed)).status).to.equal(401);
    }
  });

  it('When the change feed connection is lost, then no cached role is served: a change made meanwhile still shows within 100 ms', async () => {
    const promoted = await createUser(testApp().services, 'ROLE_USER', 'promoted');
    await warm([promoted], [['ROLE_USER']]);
    // Terminate the LISTEN connections of the processes of this test database only.
    await sql(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where application_name = 'stockroom-accounts' and datname = current_database()`,
      [],
    );
    await sql(`update app_user set role = 'ROLE_ADMIN' where id = ?`, [promoted.id]);
    const committed = performance.now();
    const times = await timeUntil(
      bases,
      promoted,
      committed,
      a => a.authorities?.includes('ROLE_ADMIN') === true,
    );
    expect(Math.max(...times), times.join(' / ')).to.be.at.most(LIMIT_MS);
    for (const base of bases)
      expect((await authorities(base, promoted)).authorities).to.deep.equal(['ROLE_ADMIN', 'ROLE_USER']);
  });
});
