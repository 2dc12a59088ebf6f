import autocannon from 'autocannon';
import type pg from 'pg';
import { openOrm, migrate } from '../../config/database.js';

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Drives `url` with autocannon on loopback for a bounded time and connection count. */
export async function load(
  url: string,
  options: {
    connections?: number;
    seconds?: number;
    headers?: Record<string, string>;
    method?: 'GET' | 'PATCH';
  } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 20,
    duration: options.seconds ?? 5,
    headers: options.headers,
    method: options.method ?? 'GET',
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export const ratio = (a: number, b: number) => (b === 0 ? 'n/a' : (a / b).toFixed(2));

export function printTable(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n## ${title}`);
  console.table(rows);
}

/** A bench's own database `name` on DATABASE_URL's server (a bench wipes it). */
export const benchDatabaseUrl = (name: string): string => {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stockroom');
  url.pathname = `/${name}`;
  return url.toString();
};

/** Empties the bench database (`client` is connected to `url`) and applies every migration. */
export async function resetBenchDatabase(client: pg.Client, url: string): Promise<void> {
  await client.query('drop schema if exists public cascade; create schema public;');
  const orm = await openOrm(url, 2);
  await migrate(orm);
  await orm.close(true);
}
