import type { EntityManager } from '@mikro-orm/postgresql';

/** Advisory-lock namespaces (first key of the two-key form). */
const REBUILD_NS = 740001;

/** Consumers hold the rebuild lock shared; a rebuild holds it exclusively, so they never interleave. */
export async function lockRebuildShared(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock_shared(?, 0)', [REBUILD_NS]);
}

export async function lockRebuildExclusive(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, 0)', [REBUILD_NS]);
}
