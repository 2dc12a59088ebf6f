/** Advisory-lock namespaces (first key of the two-key form). */
const REBUILD_NS = 740001;

/**
 * The SQL expression that takes the rebuild lock shared. Consumers hold it shared (inside the statement that
 * takes their partitions); a rebuild holds it exclusively, so they never interleave.
 */
export const REBUILD_LOCK_SHARED = `pg_advisory_xact_lock_shared(${REBUILD_NS}, 0)`;

/** The same held by a session until it releases it (a HeldBatch holds it across its two statements). */
export const REBUILD_LOCK_SHARED_SESSION = `pg_advisory_lock_shared(${REBUILD_NS}, 0)`;

/** The rebuild's exclusive hold: a session lock, taken before its transaction starts. */
export const REBUILD_LOCK_EXCLUSIVE_SESSION = `pg_advisory_lock(${REBUILD_NS}, 0)`;
