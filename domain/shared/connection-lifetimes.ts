import type { Pool } from 'pg';

/** How long a pooled connection lives on average (the ORM's pool and the outbox consumers' pool). */
export const CONNECTION_LIFETIME_SECONDS = 60;

/**
 * Spreads the lifetimes of a pool's connections over ±25 % of `maxLifetimeSeconds` instead of ending them all
 * at once. A pool opens its connections together (the first burst of requests), so with one fixed lifetime they
 * all expired together too, and every minute a process replaced its whole pool in one burst of new backends
 * (fork, catalog caches, every statement prepared again) on the same cores, and the events written during that
 * burst reached the consumers late (docs/performance.md). pg-pool reads `options.maxLifetimeSeconds`
 * as each connection opens, so a getter gives every connection its own (test/domain/connection-lifetimes.test.ts
 * fails if a pg-pool version stops doing so).
 */
export function staggerConnectionLifetimes(pool: Pool): void {
  const options = (pool as unknown as { options: { maxLifetimeSeconds?: number } }).options;
  const seconds = options.maxLifetimeSeconds ?? 0;
  if (seconds <= 0) return;
  Object.defineProperty(options, 'maxLifetimeSeconds', {
    configurable: true,
    enumerable: true,
    get: () => seconds * (0.75 + Math.random() * 0.5),
  });
}
