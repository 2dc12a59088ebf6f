import type { EntityManager } from '@mikro-orm/postgresql';

/** Advisory-lock namespaces (first key of the two-key form). */
const REBUILD_NS = 740001;

/** The SQL expression that takes the rebuild lock shared (for a statement that does more in the same trip). */
export const REBUILD_LOCK_SHARED = `pg_advisory_xact_lock_shared(${REBUILD_NS}, 0)`;

/** Consumers hold the rebuild lock shared; a rebuild holds it exclusively, so they never interleave. */
export async function lockRebuildShared(em: EntityManager): Promise<void> {
  await em.execute(`select ${REBUILD_LOCK_SHARED}`);
}

export async function lockRebuildExclusive(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, 0)', [REBUILD_NS]);
}
