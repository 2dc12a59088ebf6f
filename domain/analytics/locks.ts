import type { EntityManager } from '@mikro-orm/postgresql';

/** Advisory-lock namespaces (first key of the two-key form). */
const REBUILD_NS = 740001;
const ANALYTICS_FOLD_NS = 740002;
const ALERTS_ITEM_NS = 740003;

/** Consumers hold the rebuild lock shared; a rebuild holds it exclusively, so they never interleave. */
export async function lockRebuildShared(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock_shared(?, 0)', [REBUILD_NS]);
}

export async function lockRebuildExclusive(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, 0)', [REBUILD_NS]);
}

/** Makes the analytics folds single-flight (they write rows shared by many items). */
export async function lockAnalyticsFold(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, 0)', [ANALYTICS_FOLD_NS]);
}

/** Serializes the alerts consumer's work on one item, so that item's events apply in event order. */
export async function lockAlertsItem(em: EntityManager, itemId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, hashtext(?))', [ALERTS_ITEM_NS, itemId]);
}
