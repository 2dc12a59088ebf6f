import { Migration } from '@mikro-orm/migrations';

/**
 * Lets the analytics consumer's updates of `analytics_item_day` be HOT updates (the row version stays on its
 * page and no index gets a new entry). A fold updates an existing day row's sums, running count and "latest"
 * fields; two indexes held some of those columns (`latest_idx`: last_event_id, with wac_q/wac_c included;
 * `pair_idx`: cum_entries included), so every update added an entry to all five indexes (0 of 11,335 updates
 * were HOT in a bench drain). Now no index holds a column a fold changes:
 * - the "latest day row of an item up to a day" look-ups use the primary key (item_id, day, supplier_key)
 *   backwards, same-day rows of several suppliers ordered by last_event_id in an incremental sort;
 * - the pair index keeps its keys without the running count, which the look-up reads from the row.
 * A fill factor of 80 leaves room on each page for the new row versions.
 */
export class Migration20261125120000RollupHotUpdates extends Migration {
  override up(): void {
    this.addSql('drop index analytics_item_day_latest_idx');
    this.addSql('drop index analytics_item_day_pair_idx');
    this.addSql(
      'create index analytics_item_day_pair_idx on analytics_item_day (item_id, supplier_key, day desc)',
    );
    this.addSql('alter table analytics_item_day set (fillfactor = 80)');
  }

  override down(): void {
    this.addSql('alter table analytics_item_day reset (fillfactor)');
    this.addSql('drop index analytics_item_day_pair_idx');
    this.addSql(
      'create index analytics_item_day_pair_idx on analytics_item_day (item_id, supplier_key, day desc) include (cum_entries)',
    );
    this.addSql(
      `create index analytics_item_day_latest_idx on analytics_item_day (item_id, day desc, last_event_id desc)
       include (wac_q, wac_c, supplier_key)`,
    );
  }
}
