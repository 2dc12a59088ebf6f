import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { testEnv } from './test-env.js';
import type { TestCertificates } from './certificates.js';
import { scaled } from './machine-time.js';

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, delay));
  }
}

/**
 * A redis-server owned by one test: no persistence, so a restart comes back empty. Never the shared one. With
 * `tls`, it speaks TLS only (`--tls-port`, no plain port) with the given server certificate.
 */
export class TestRedis {
  private process: ChildProcess | undefined;
  private dir: string | undefined;

  constructor(
    readonly port: number,
    private readonly options: { tls?: TestCertificates; args?: string[] } = {},
  ) {}

  get url(): string {
    return `${this.options.tls ? 'rediss' : 'redis'}://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const tls = this.options.tls;
    // Its own working directory: a replica's full sync writes an RDB file there, never into the checkout.
    this.dir ??= mkdtempSync(path.join(tmpdir(), 'stockroom-redis-'));
    const listen = tls
      ? [
          ...['--port', '0', '--tls-port', String(this.port), '--tls-cert-file', tls.serverCert],
          ...['--tls-key-file', tls.serverKey, '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no'],
        ]
      : ['--port', String(this.port)];
    this.process = spawn(
      'redis-server',
      [
        ...listen,
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        ...(this.options.args ?? []),
      ],
      {
        stdio: 'ignore',
      },
    );
    await until(() => this.ping(), 5000, `redis-server on ${this.port}`);
  }

  /** A client of this server (verified against its CA when it speaks TLS). */
  client(): Redis {
    return new Redis(this.url, {
      tls: this.options.tls ? { ca: readFileSync(this.options.tls.caFile, 'utf8') } : undefined,
      maxRetriesPerRequest: 1,
    });
  }

  private async ping(): Promise<boolean> {
    const client = new Redis(this.url, {
      tls: this.options.tls ? { ca: readFileSync(this.options.tls.caFile, 'utf8') } : undefined,
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
    // Without persistence, SIGTERM is SHUTDOWN NOSAVE (redis-cli would need the TLS options too).
    if (this.options.tls) child.kill('SIGTERM');
    else spawnSync('redis-cli', ['-p', String(this.port), 'shutdown', 'nosave'], { stdio: 'ignore' });
    await exited;
    this.process = undefined;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

/**
 * A Redis Sentinel (`redis-server --sentinel`) owned by one test, watching the master `name` at `masterPort` (quorum 2, a master is down
 * after 1 s). Its config file lives in a temp dir of its own (Sentinel rewrites it).
 */
export class TestSentinel {
  private process: ChildProcess | undefined;
  private dir: string | undefined;

  constructor(
    readonly port: number,
    private readonly masterPort: number,
    readonly name = 'stockroom',
  ) {}

  async start(): Promise<void> {
    this.dir = mkdtempSync(path.join(tmpdir(), 'stockroom-sentinel-'));
    const file = path.join(this.dir, 'sentinel.conf');
    writeFileSync(
      file,
      [
        `port ${this.port}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        `sentinel monitor ${this.name} 127.0.0.1 ${this.masterPort} 2`,
        `sentinel down-after-milliseconds ${this.name} 1000`,
        `sentinel failover-timeout ${this.name} 10000`,
        `sentinel parallel-syncs ${this.name} 1`,
        '',
      ].join('\n'),
    );
    this.process = spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' });
    await until(
      async () => {
        const client = this.client();
        try {
          return (await client.ping()) === 'PONG';
        } catch {
          return false;
        } finally {
          client.disconnect();
        }
      },
      5000,
      `redis-sentinel on ${this.port}`,
    );
  }

  /** A plain client of this Sentinel (for SENTINEL commands). */
  client(): Redis {
    const client = new Redis({
      port: this.port,
      host: '127.0.0.1',
      maxRetriesPerRequest: 0,
      lazyConnect: false,
    });
    client.on('error', () => undefined);
    return client;
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise(resolve => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    this.process = undefined;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
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
      const timer = setTimeout(() => reject(new Error('worker process did not start')), scaled(timeoutMs));
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
    await killProcess(this.child);
  }

  /** SIGTERM (as a platform stops a dyno): the exit code and how long the process took to exit. */
  async terminate(timeoutMs = 30000): Promise<{ code: number | null; ms: number }> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error('not running');
    const started = Date.now();
    const exited = new Promise<number | null>(resolve => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    return { code, ms: Date.now() - started };
  }

  async stop(): Promise<void> {
    await stopProcess(this.child, 10000);
  }
}

/** kill -9 of a child this test started (by its handle, never by name); resolves once it is gone. */
export async function killProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(resolve => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** SIGTERM to a child this test started, SIGKILL after `graceMs`; resolves once it is gone. */
export async function stopProcess(child: ChildProcess | undefined, graceMs: number): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(resolve => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL cluster owned by one test (initdb into a temp dir, its own port, socket in that dir). Never the
 * shared server. initdb and postgres refuse to run as root: as root, the binaries run as the `postgres` user.
 * With `tls`: ssl=on with the given server certificate, and TCP connections only over TLS (`hostssl` rules).
 */
export class TestPostgres {
  private dir: string | undefined;

  constructor(
    readonly port: number,
    private readonly options: { tls?: TestCertificates; args?: string[] } = {},
  ) {}

  /** Why this machine cannot run a test cluster, or undefined when it can. */
  static missing(): string | undefined {
    return existsSync(`${PG_BIN}/initdb`) ? undefined : `no PostgreSQL binaries in ${PG_BIN}`;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/stockroom_crash`;
  }

  /** Runs a PostgreSQL binary without blocking the event loop (the app under test shares this process). */
  private async run(binary: string, args: string[]): Promise<void> {
    const asRoot = process.getuid?.() === 0;
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', `${PG_BIN}/${binary}`, ...args]]
      : [`${PG_BIN}/${binary}`, args];
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>(resolve => child.once('close', resolve));
    if (code !== 0) throw new Error(`${binary} ${args.join(' ')} failed (${code}): ${output}`);
  }

  /** initdb (trust auth, user postgres) into a fresh temp dir. */
  async init(): Promise<void> {
    this.dir = mkdtempSync(path.join(tmpdir(), 'stockroom-pg-'));
    if (process.getuid?.() === 0) {
      const { uid, gid } = postgresIds();
      chownSync(this.dir, uid, gid);
    }
    await this.run('initdb', ['-D', this.dir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    if (this.options.tls) {
      const hba = path.join(this.dir, 'pg_hba.conf');
      writeFileSync(
        hba,
        'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n',
      );
      if (process.getuid?.() === 0) {
        const { uid, gid } = postgresIds();
        chownSync(hba, uid, gid);
      }
    }
  }

  /**
   * A streaming replica of `primary` (running): `pg_basebackup -R` into a fresh temp dir, so that start() runs
   * it as a hot standby that follows the primary.
   */
  async initReplicaOf(primary: TestPostgres): Promise<void> {
    this.dir = mkdtempSync(path.join(tmpdir(), 'stockroom-pg-replica-'));
    if (process.getuid?.() === 0) {
      const { uid, gid } = postgresIds();
      chownSync(this.dir, uid, gid);
    }
    await this.run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      this.dir,
      '-R',
      '-X',
      'stream',
      // An immediate checkpoint: the default spread one makes the backup wait for most of a minute.
      '--checkpoint=fast',
      '--no-sync',
    ]);
  }

  /** pg_ctl start, returning once the server accepts connections. */
  async start(): Promise<void> {
    if (!this.dir) throw new Error('init() first');
    const tls = this.options.tls;
    const options =
      `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c max_connections=40` +
      (tls ? ` -c ssl=on -c ssl_cert_file=${tls.serverCert} -c ssl_key_file=${tls.serverKey}` : '');
    await this.run('pg_ctl', [
      '-D',
      this.dir,
      '-o',
      options,
      '-l',
      path.join(this.dir, 'server.log'),
      '-w',
      '-t',
      '30',
      'start',
    ]);
  }

  /** pg_ctl stop; `immediate` is a crash: no checkpoint, every backend killed, recovery from WAL at the next start. */
  async stop(mode: 'immediate' | 'fast' = 'fast'): Promise<void> {
    if (!this.dir || !existsSync(path.join(this.dir, 'postmaster.pid'))) return;
    await this.run('pg_ctl', ['-D', this.dir, '-m', mode, '-w', 'stop']);
  }

  /** Stops the server (if running) and removes the cluster. */
  async destroy(): Promise<void> {
    if (!this.dir) return;
    try {
      await this.stop('immediate');
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
      this.dir = undefined;
    }
  }
}

/** The uid/gid of the `postgres` OS user (a test cluster's files must be its own). */
export function postgresIds(): { uid: number; gid: number } {
  const out = spawnSync('id', ['postgres'], { encoding: 'utf8' }).stdout;
  const uid = /uid=(\d+)/.exec(out)?.[1];
  const gid = /gid=(\d+)/.exec(out)?.[1];
  if (!uid || !gid) throw new Error('no postgres OS user to run the test cluster as');
  return { uid: Number(uid), gid: Number(gid) };
}
