import { ConfigError } from './config-error.js';
import type { Config } from './env.js';

/** Which roles a process runs: the web API, the workers, or both (`npm start`). */
export interface ProcessRoles {
  readonly web: boolean;
  readonly worker: boolean;
}

/** The PostgreSQL connections a process may hold on the primary, pool by pool (0: not opened by its roles). */
export interface ConnectionSplit {
  /** The ORM's pool: requests, jobs, imports, integrity checks (DB_POOL_MAX). */
  readonly orm: number;
  /** Unpaged lists of items, suppliers and products (web). */
  readonly lists: number;
  /** Exports and unpaged history, counted per user (web). */
  readonly streams: number;
  /** The account change feed's LISTEN connection (web). */
  readonly listen: number;
  /** The outbox consumers' batches (worker). */
  readonly consumers: number;
  /** A rollup rebuild's reader and its four writers, each a connection of its own (worker). */
  readonly rebuild: number;
  /** The sum: what the process may hold at most on the primary. */
  readonly total: number;
}

/** Today's pool sizes, kept when DB_CONNECTIONS_MAX is unset. */
const DEFAULT_ORM = 10;
const DEFAULT_LISTS = 8;
const DEFAULT_CONSUMERS = 8;
/** Connections of the counted streams per STREAMS_PER_USER, without a total (each held while spooled). */
const STREAM_CONNECTIONS_PER_SLOT = 3;
const LISTEN = 1;
const REBUILD = 5;

type Pool = 'orm' | 'lists' | 'streams' | 'consumers';

/** How a total is shared among the pools a role opens (after the fixed LISTEN and rebuild connections). */
const WEIGHTS: Record<Pool, number> = { orm: 2, lists: 1, streams: 1, consumers: 1 };

/**
 * The connections each pool of a process with `roles` may hold. Without DB_CONNECTIONS_MAX, today's sizes.
 * With it, the pools share the total (after the LISTEN connection and the rebuild's five) by WEIGHTS, each at
 * least one; an explicit DB_POOL_MAX wins, and a split that cannot fit the total is a ConfigError.
 */
export function connectionSplit(config: Config, roles: ProcessRoles): ConnectionSplit {
  const pools: Pool[] = ['orm'];
  if (roles.web) pools.push('lists', 'streams');
  if (roles.worker) pools.push('consumers');
  const fixed = (roles.web ? LISTEN : 0) + (roles.worker ? REBUILD : 0);
  const sizes: Record<Pool, number> = { orm: 0, lists: 0, streams: 0, consumers: 0 };
  const max = config.dbConnectionsMax;
  if (max === undefined) {
    sizes.orm = config.dbPoolMax ?? DEFAULT_ORM;
    sizes.lists = DEFAULT_LISTS;
    sizes.streams = config.streamsPerUser * STREAM_CONNECTIONS_PER_SLOT;
    sizes.consumers = DEFAULT_CONSUMERS;
  } else {
    const shared = pools.filter(pool => pool !== 'orm' || config.dbPoolMax === undefined);
    const explicit = config.dbPoolMax ?? 0;
    const needed = fixed + explicit + shared.length;
    if (needed > max)
      throw new ConfigError(
        'DB_CONNECTIONS_MAX',
        `is ${max}, but this ${roleName(roles)} process needs at least ${needed} PostgreSQL connections (${describeNeed(roles, config.dbPoolMax, shared)}); raise it or lower DB_POOL_MAX`,
      );
    let left = max - fixed - explicit;
    if (config.dbPoolMax !== undefined) sizes.orm = config.dbPoolMax;
    const weight = shared.reduce((sum, pool) => sum + WEIGHTS[pool], 0);
    const spare = left - shared.length;
    for (const pool of shared) {
      sizes[pool] = 1 + Math.floor((spare * WEIGHTS[pool]) / weight);
      left -= sizes[pool];
    }
    // What the rounding left goes to the first shared pool (the ORM's unless DB_POOL_MAX is set).
    if (shared.length > 0) sizes[shared[0]] += left;
  }
  const split = {
    orm: sizes.orm,
    lists: roles.web ? sizes.lists : 0,
    streams: roles.web ? sizes.streams : 0,
    listen: roles.web ? LISTEN : 0,
    consumers: roles.worker ? sizes.consumers : 0,
    rebuild: roles.worker ? REBUILD : 0,
  };
  return { ...split, total: Object.values(split).reduce((sum, n) => sum + n, 0) };
}

function roleName(roles: ProcessRoles): string {
  if (roles.web && roles.worker) return 'web and worker';
  return roles.web ? 'web' : 'worker';
}

function describeNeed(roles: ProcessRoles, dbPoolMax: number | undefined, shared: Pool[]): string {
  const parts = [dbPoolMax === undefined ? undefined : `DB_POOL_MAX ${dbPoolMax}`]
    .concat(shared.map(pool => `${pool} 1`))
    .concat(roles.web ? [`LISTEN ${LISTEN}`] : [])
    .concat(roles.worker ? [`rollup rebuild ${REBUILD}`] : []);
  return parts.filter(Boolean).join(' + ');
}
