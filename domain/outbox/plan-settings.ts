/* How the consumers' connections plan their statements (select-list expressions of set_config). */

/**
 * The consumers' statements are prepared, and after five runs PostgreSQL may keep a generic plan made from what
 * it knew of outbox_event then: planned while the table was small (and never analyzed, autovacuum being off on
 * the bench), a history batch joined the outbox by sequential scans, its statement went from ~3 ms to 0.3-2.4 s
 * as the table grew, and the backlog never caught up (lag p50 0.8-12 s in 3 lag runs of 10). So the connection
 * a consumer uses plans every run of a statement for its parameters and the tables as they are now
 * (session-wide: a one-statement batch is planned before its own settings take effect; it holds from the next
 * run on). Planning costs CPU (the analytics rollup writes alone take ~0.9 ms per batch; 80-160 µs more
 * PostgreSQL CPU per event than prepared plans in an A/B lag run at 800 writes/s), but no plan can go stale.
 */
export const CUSTOM_PLANS_SQL = "set_config('plan_cache_mode', 'force_custom_plan', false)";

/**
 * A held run's statements (HeldBatch) keep their generic plans instead, made so that no plan can go stale:
 * with sequential scans disabled every plan reaches outbox_event and the rollup tables through their indexes,
 * whatever the statistics said when it was made (the statements look rows up by key, per partition or per
 * batch row, never in bulk). Planning was half of the analytics write statement: 4.1 ms against 2.0 ms per batch
 * of 12 events with generic plans (same connection, same rows, 20 runs each, twice). Set session-wide by the
 * take (from the next statement on; a run's first take is planned afresh) and given back when the run releases
 * its partitions (RELEASE_SESSION_SQL), so nothing else on the pooled connection plans that way.
 */
export const HELD_PLANS_SQL =
  "set_config('plan_cache_mode', 'force_generic_plan', false), set_config('enable_seqscan', 'off', false)";

/** Gives back what a held run took on its connection: its session advisory locks and HELD_PLANS_SQL's settings. */
export const RELEASE_SESSION_SQL = `pg_advisory_unlock_all(), ${CUSTOM_PLANS_SQL}, set_config('enable_seqscan', 'on', false)`;
