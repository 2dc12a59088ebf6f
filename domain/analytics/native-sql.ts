import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlRun } from '../shared/native-transaction.js';

let sequence = 0;

/**
 * Runs SQL with native `$n` parameters on the EntityManager's own connection (inside `em.transactional` it
 * joins that transaction: `getKysely()` returns the pinned transaction). MikroORM's `execute()` inlines
 * parameters client-side, which is slow for large JSON parameters; the rollup writes send megabytes in a
 * rebuild, so they take this path (an order of magnitude faster for them).
 */
export async function executeNative<T = Record<string, unknown>>(
  em: EntityManager,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const kysely = em.getKysely() as unknown as {
    executeQuery(query: unknown): Promise<{ rows: T[] }>;
  };
  sequence += 1;
  const result = await kysely.executeQuery({
    sql: text,
    parameters: params,
    query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
    queryId: { queryId: `analytics-native-${sequence}` },
  });
  return result.rows;
}

/** `executeNative` on an EntityManager as a plain statement runner (joins its transaction, if any). */
export const nativeSql =
  (em: EntityManager): SqlRun =>
  <T>(text: string, params: unknown[] = []) =>
    executeNative<T>(em, text, params);
