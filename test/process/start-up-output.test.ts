import { spawn } from 'node:child_process';
import { expect } from 'chai';
import pg from 'pg';
import { TEST_DATABASE_URL, testEnv } from '../support/test-env.js';
import { spawnStockroom, waitForExit } from '../support/spawn-stockroom.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait-for.js';

/** The test environment without PUBLIC_URL, as a user who only sets PORT starts it. */
function envWithoutPublicUrl(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env = testEnv({ LOG_LEVEL: 'info', ...overrides });
  delete env.PUBLIC_URL;
  return { ...process.env, PUBLIC_URL: undefined, ...env };
}

async function autovacuumIsOff(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ autovacuum: string }>('show autovacuum');
    return rows[0].autovacuum === 'off';
  } finally {
    await client.end();
  }
}

describe('What a starting process prints', function () {
  this.timeout(60000);

  it('When started in production with PORT set and no PUBLIC_URL, then every line is JSON, the links use that port, and autovacuum off is warned about exactly when it is off', async () => {
    const port = await freePort();
    const child = spawnStockroom(
      ['--web'],
      envWithoutPublicUrl({ NODE_ENV: 'production', PORT: String(port) }),
    );
    try {
      await waitFor(() => child.output().includes('Stockroom API listening'), 30000, 'the listening line');
      child.kill('SIGTERM');
      expect(await waitForExit(child, 30000), child.output()).to.equal(0);
      const lines = child
        .output()
        .split('\n')
        .filter(line => line.trim() !== '');
      const records = lines.map(line => JSON.parse(line) as Record<string, unknown>);
      const listening = records.find(r => r.msg === 'Stockroom API listening');
      expect(listening?.docs).to.equal(`http://localhost:${port}/api/docs`);
      const warned = records.some(r => r.level === 40 && String(r.msg).includes('autovacuum = off'));
      expect(warned).to.equal(await autovacuumIsOff());
      const metricsOpen = records.filter(
        r => r.level === 40 && String(r.msg).includes('METRICS_TOKEN is unset'),
      );
      expect(metricsOpen).to.have.length(1);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('When started in development on a terminal, then the lines are written for people, not as JSON', async function () {
    const port = await freePort();
    const command = `${JSON.stringify(process.execPath)} --import tsx scripts/start-all.ts --web`;
    // `script` gives the process a terminal as its standard output, as a developer's shell does.
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: envWithoutPublicUrl({ NODE_ENV: 'development', PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitFor(() => output.includes('Stockroom API listening'), 30000, 'the listening line');
      const line = output.split(/\r?\n/).find(l => l.includes('Stockroom API listening')) ?? '';
      expect(line.trimStart().startsWith('{'), line).to.equal(false);
      expect(line).to.match(/INFO/);
      expect(output).to.contain(`http://localhost:${port}/api/docs`);
    } finally {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
      await new Promise(resolve => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    }
  });
});
