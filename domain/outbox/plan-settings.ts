/* How a consumer plans its statements on the ORM's pool (a select-list expression of set_config). */

/**
 * A failed batch's fallback (one item at a time, in transactions on the ORM's pool) plans every run of a
 * statement for its parameters and the tables as they are now (session-wide: set by the transaction's first
 * statement, it holds from the next one on). With PostgreSQL's own choice a prepared statement may keep, after
 * five runs, a generic plan made from what it knew of outbox_event then: planned while the table was small (and
 * never analyzed), a history batch joined the outbox by sequential scans and slowed down by orders of magnitude
 * as the table grew. The batches themselves run on consumerPool, whose generic
 * plans cannot go stale that way (sequential scans disabled).
 */
export const CUSTOM_PLANS_SQL = "set_config('plan_cache_mode', 'force_custom_plan', false)";
