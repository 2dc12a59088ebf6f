import { Migration } from '@mikro-orm/migrations';

/**
 * The stored replenishment computation (purchasing contract, "How a suggestion is computed"): per item the
 * demand window (length, total, sum of squares), d's standard deviation, the lead time used and the demand terms
 * of the levels, as the worker computed them from the daily reason rollups; the reads combine them with each
 * item's current quantity, on-order quantity, own levels and minimum. One row per run in
 * `replenishment_run` (the latest wins): its absence means no run yet (R1 answers `computedAt: null`).
 * `reorder_point` and `order_up_to_quantity` are the computed levels with the minimum of the run's time.
 */
export class Migration20261128120000Replenishment extends Migration {
  override up(): void {
    this.addSql(`
      create table replenishment_level (
        item_id uuid primary key,
        window_days integer not null check (window_days >= 1),
        window_demand bigint not null check (window_demand >= 0),
        sum_of_squares numeric not null check (sum_of_squares >= 0),
        demand_std_dev double precision not null,
        lead_time_days integer not null,
        demand_reorder_point bigint not null,
        cover_quantity bigint not null,
        reorder_point bigint not null,
        order_up_to_quantity bigint not null,
        computed_at timestamptz not null
      )`);
    this.addSql(`
      create table replenishment_run (
        id smallint primary key default 1 check (id = 1),
        computed_at timestamptz not null,
        today date not null,
        service_level numeric(4, 3) not null,
        z numeric(6, 4) not null,
        items integer not null,
        suggestions integer not null
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists replenishment_run');
    this.addSql('drop table if exists replenishment_level');
  }
}
