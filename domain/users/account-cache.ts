import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { PostgresConnection } from '../shared/postgres-connection.js';
import { findUserById, findUserByUsername, type UserRow } from './load-actor.js';

/** The channel the `app_user` trigger notifies (payload: the user id, or `*` for everything). */
export const ACCOUNT_CHANNEL = 'stockroom_account_changed';

const MAX_ENTRIES = 10000;
const MAX_RETRY_MS = 5000;
/** A silently dead feed (no RST, e.g. a network partition) is noticed by a heartbeat within about 3 s. */
const HEARTBEAT_EVERY_MS = 2000;
const HEARTBEAT_TIMEOUT_MS = 1500;

/**
 * The accounts this process has seen, kept in memory so an authenticated request costs no database round trip
 * for its actor (DESIGN.md, Auth). Correctness rests on the push, not on a TTL: a dedicated connection LISTENs
 * to the `app_user` trigger's notifications, each of which drops the changed user at commit; while that
 * connection is not listening (starting, lost, reconnecting) nothing is served from memory and the whole cache
 * is dropped, because changes may have been missed. A load that overlaps a change is not stored (generation
 * counter), so a row read before the change can never outlive its notification. Negative results (no such
 * user) are never cached. The connection opens on first use, so processes that authenticate nobody (workers)
 * never open it.
 */
export class AccountCache {
  private readonly byName = new Map<string, UserRow>();
  private readonly byId = new Map<number, UserRow>();
  private readonly namesOf = new Map<number, string[]>();
  private generation = 0;
  private client: pg.Client | undefined;
  private listening = false;
  private started = false;
  private closed = false;
  private retryMs = 100;
  private retryTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly database: PostgresConnection,
    private readonly logger?: Logger,
  ) {}

  /** The cached account named `username`, without waiting (undefined on a miss or while not listening). */
  cachedByUsername(username: string): UserRow | undefined {
    return this.cached(this.byName, username);
  }

  /** The current account named `username` (a token's `sub`); `em` is called only on a miss. */
  async byUsername(em: () => EntityManager, username: string): Promise<UserRow | undefined> {
    return this.lookup(this.byName, username, () => findUserByUsername(em(), username), username);
  }

  /** The current account with id `id` (a session's user). */
  async byUserId(em: () => EntityManager, id: number): Promise<UserRow | undefined> {
    return this.lookup(this.byId, id, () => findUserById(em(), id));
  }

  private cached<K>(entries: Map<K, UserRow>, key: K): UserRow | undefined {
    return this.listening ? entries.get(key) : undefined;
  }

  /**
   * From memory while the change feed is connected, else loaded; a loaded account is remembered only when no
   * change arrived (and the feed stayed up) while it was being read.
   */
  private async lookup<K>(
    entries: Map<K, UserRow>,
    key: K,
    load: () => Promise<UserRow | undefined>,
    username?: string,
  ): Promise<UserRow | undefined> {
    this.ensureStarted();
    const hit = this.cached(entries, key);
    if (hit) return hit;
    const generation = this.generation;
    const user = await load();
    if (user && this.listening && generation === this.generation) this.store(user, username);
    return user;
  }

  /** Whether the change feed is connected (entries are served from memory only then). */
  get isListening(): boolean {
    return this.listening;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.heartbeat);
    this.drop();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private store(user: UserRow, name?: string): void {
    if (this.byId.size >= MAX_ENTRIES || this.byName.size >= MAX_ENTRIES) this.drop();
    this.byId.set(user.id, user);
    if (name !== undefined) {
      this.byName.set(name, user);
      const names = this.namesOf.get(user.id);
      if (!names) this.namesOf.set(user.id, [name]);
      else if (!names.includes(name)) names.push(name);
    }
  }

  private evict(id: number): void {
    this.generation++;
    this.byId.delete(id);
    for (const name of this.namesOf.get(id) ?? []) this.byName.delete(name);
    this.namesOf.delete(id);
  }

  private drop(): void {
    this.generation++;
    this.byId.clear();
    this.byName.clear();
    this.namesOf.clear();
  }

  private ensureStarted(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.database.connectionString,
      ssl: this.database.ssl,
      application_name: 'stockroom-accounts',
      keepAlive: true,
    });
    this.client = client;
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.listening = false;
      clearInterval(this.heartbeat);
      this.drop();
      void client.end().catch(() => undefined);
      if (this.closed) return;
      this.logger?.warn({ err: error }, 'account change feed lost; serving accounts from the database');
      this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
      this.retryTimer.unref();
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', message => {
      if (message.channel !== ACCOUNT_CHANNEL) return;
      const id = Number(message.payload);
      if (message.payload === '*' || !Number.isInteger(id)) this.drop();
      else this.evict(id);
    });
    try {
      await client.connect();
      await client.query(`listen ${ACCOUNT_CHANNEL}`);
      if (this.client !== client || this.closed) return;
      // Whatever changed while nobody listened is unknown: start from an empty cache.
      this.drop();
      this.listening = true;
      this.retryMs = 100;
      this.heartbeat = setInterval(() => {
        const timer = setTimeout(() => lost(new Error('heartbeat timed out')), HEARTBEAT_TIMEOUT_MS);
        client.query('select 1').then(
          () => clearTimeout(timer),
          (error: Error) => {
            clearTimeout(timer);
            lost(error);
          },
        );
      }, HEARTBEAT_EVERY_MS);
      this.heartbeat.unref();
    } catch (error) {
      lost(error as Error);
    }
  }
}
