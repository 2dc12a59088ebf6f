import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { testEnv } from './test-env.js';

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, delay));
  }
}

/** A redis-server owned by one test: no persistence, so a restart comes back empty. Never the shared one. */
export class TestRedis {
  private process: ChildProcess | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await until(() => this.ping(), 5000, `redis-server on ${this.port}`);
  }

  private async ping(): Promise<boolean> {
    const client = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }

  /** Stops this server only (SHUTDOWN NOSAVE), waiting until it is gone. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise(resolve => child.once('exit', resolve));
    spawnSync('redis-cli', ['-p', String(this.port), 'shutdown', 'nosave'], { stdio: 'ignore' });
    await exited;
    this.process = undefined;
  }
}

/**
 * A worker process (`start-all.ts --worker`) on the test database, with the given Redis and prefix. Spawned
 * with node directly (no tsx wrapper process), so SIGKILL hits the worker itself.
 */
export class WorkerProcess {
  private child: ChildProcess | undefined;

  constructor(private readonly env: Record<string, string>) {}

  /** Starts the process and resolves once its workers are running (it logs "workers started"). */
  async start(timeoutMs = 60000): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start-all.ts', '--worker'], {
      env: {
        ...testEnv({
          OUTBOX_SWEEP_INTERVAL_MS: '200',
          WORKER_LOCK_DURATION_MS: '2000',
          WORKER_STALLED_INTERVAL_MS: '1000',
          LOG_LEVEL: process.env.TEST_WORKER_LOGS ?? 'info',
          ...this.env,
        }),
        PATH: process.env.PATH,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let buffered = '';
      const timer = setTimeout(() => reject(new Error('worker process did not start')), timeoutMs);
      const onExit = () => reject(new Error('worker process exited during start-up'));
      child.once('exit', onExit);
      child.stdout.on('data', (chunk: Buffer) => {
        if (process.env.TEST_WORKER_LOGS) process.stdout.write(chunk);
        if (buffered === null) return;
        buffered += chunk.toString();
        if (buffered.includes('"workers started"')) {
          buffered = null as unknown as string;
          clearTimeout(timer);
          child.off('exit', onExit);
          resolve();
        }
      });
    });
  }

  /** kill -9: no graceful close, jobs in flight stay locked until their lock expires. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise(resolve => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise(resolve => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    await exited;
    clearTimeout(timer);
  }
}
