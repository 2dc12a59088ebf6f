import type { MikroORM } from '@mikro-orm/postgresql';
import { withTimeout } from '../domain/shared/with-timeout.js';

export type DatabaseState = 'ok' | 'down' | 'unknown';

/**
 * Checks the database in the background so the liveness endpoint can report its last state without
 * touching the database itself.
 */
export class DatabaseProbe {
  state: DatabaseState = 'unknown';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly intervalMs = 5000,
  ) {}

  /** One real round trip, bounded to 3 s. Returns the client address as the database sees it. */
  async check(timeoutMs = 3000): Promise<string> {
    const rows = await withTimeout(
      this.orm.em
        .fork()
        .execute<{ ip: string | null }[]>(`select coalesce(host(inet_client_addr()), 'local') as ip`),
      timeoutMs,
      () => new Error(`database did not answer within ${timeoutMs} ms`),
    );
    return rows[0]?.ip ?? 'local';
  }

  start(): void {
    const tick = () => {
      this.check()
        .then(() => (this.state = 'ok'))
        .catch(() => (this.state = 'down'));
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
