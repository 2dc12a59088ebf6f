import type { EntityManager } from '@mikro-orm/postgresql';

/** Advisory-lock namespaces (first key of the two-key form). */
const REBUILD_NS = 740001;
const ANALYTICS_ITEM_NS = 740002;
const ALERTS_ITEM_NS = 740003;

/** Consumers hold the rebuild lock shared; a rebuild holds it exclusively, so they never interleave. */
export async function lockRebuildShared(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock_shared(?, 0)', [REBUILD_NS]);
}

export async function lockRebuildExclusive(em: EntityManager): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, 0)', [REBUILD_NS]);
}

/** Serializes one consumer's work on one item, so that item's events fold in event order. */
export async function lockItem(em: EntityManager, consumer: 'analytics' | 'alerts', itemId: string) {
  const ns = consumer === 'analytics' ? ANALYTICS_ITEM_NS : ALERTS_ITEM_NS;
  await em.execute('select pg_advisory_xact_lock(?, hashtext(?))', [ns, itemId]);
}
