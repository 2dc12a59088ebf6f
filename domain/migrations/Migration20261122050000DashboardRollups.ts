import { Migration } from '@mikro-orm/migrations';

const SUPPLIER_SUMS = `
  entries bigint not null default 0,
  qty_in bigint not null default 0,
  qty_out bigint not null default 0,
  purchases_qty bigint not null default 0,
  purchases_cost numeric(24, 4) not null default 0,
  returns_in_qty bigint not null default 0,
  returns_in_cost numeric(24, 4) not null default 0,
  cogs_qty bigint not null default 0,
  cogs_cost numeric(24, 4) not null default 0,
  write_off_qty bigint not null default 0,
  write_off_cost numeric(24, 4) not null default 0`;

// One column a line (numeric(24, 4) has a comma of its own).
const SUM_NAMES = SUPPLIER_SUMS.trim()
  .split(/,\n/)
  .map(c => c.trim().split(/\s+/)[0]);

/**
 * Rollups whose size does not grow with activity, so the dashboard and the financial buckets cost the same
 * whether an item changed once a day or fifty times:
 * - `analytics_supplier_day` / `analytics_supplier_month`: movement and cost buckets per supplier and UTC day
 *   or month (a window reads its whole months from the month rows and only its ragged ends from the day rows);
 * - `analytics_item_supplier`: per (item, supplier) the total entries, first and last day and the latest name;
 * - `analytics_item_day.cum_entries`: the running entry count of the (item, supplier) pair up to that day, so
 *   the entries of any window are two look-ups per pair instead of a scan of its days.
 * Existing rollups are back-filled from `analytics_item_day`.
 */
export class Migration20261122050000DashboardRollups extends Migration {
  override up(): void {
    this.addSql('alter table analytics_item_day add column cum_entries bigint not null default 0');
    this.addSql(`
      update analytics_item_day t set cum_entries = s.cum
      from (select item_id, day, supplier_key,
                   sum(entries) over (partition by item_id, supplier_key order by day) as cum
            from analytics_item_day) s
      where t.item_id = s.item_id and t.day = s.day and t.supplier_key = s.supplier_key`);
    this.addSql(
      'create index analytics_item_day_pair_idx on analytics_item_day (item_id, supplier_key, day desc) include (cum_entries)',
    );

    // The financial summary's opening/ending look-ups read the WAC state of each item's latest day row: covered
    // by the index, they are index-only scans.
    this.addSql('drop index if exists analytics_item_day_latest_idx');
    this.addSql(
      `create index analytics_item_day_latest_idx on analytics_item_day (item_id, day desc, last_event_id desc)
       include (wac_q, wac_c, supplier_key)`,
    );

    this.addSql(`
      create table analytics_item_supplier (
        item_id uuid not null,
        supplier_key uuid not null,
        first_day date not null,
        last_day date not null,
        entries bigint not null,
        item_name varchar(255) not null,
        last_event_id bigint not null,
        primary key (item_id, supplier_key)
      )`);
    this.addSql(
      'create index analytics_item_supplier_supplier_idx on analytics_item_supplier (supplier_key)',
    );
    this.addSql(`
      insert into analytics_item_supplier
      select item_id, supplier_key, min(day), max(day), sum(entries),
             (array_agg(item_name order by day desc, last_event_id desc))[1], max(last_event_id)
      from analytics_item_day group by item_id, supplier_key`);

    for (const [table, key] of [
      ['analytics_supplier_day', 'day'],
      ['analytics_supplier_month', 'month'],
    ]) {
      this.addSql(`
        create table ${table} (
          ${key} date not null,
          supplier_key uuid not null,
          ${SUPPLIER_SUMS},
          primary key (${key}, supplier_key)
        )`);
      const bucket = key === 'day' ? 'day' : "date_trunc('month', day)::date";
      this.addSql(`
        insert into ${table} (${key}, supplier_key, ${SUM_NAMES.join(', ')})
        select ${bucket}, supplier_key, ${SUM_NAMES.map(c => `sum(${c})`).join(', ')}
        from analytics_item_day group by 1, 2`);
    }
  }

  override down(): void {
    this.addSql('drop table if exists analytics_supplier_month');
    this.addSql('drop table if exists analytics_supplier_day');
    this.addSql('drop table if exists analytics_item_supplier');
    this.addSql('drop index if exists analytics_item_day_pair_idx');
    this.addSql('drop index if exists analytics_item_day_latest_idx');
    this.addSql(
      'create index analytics_item_day_latest_idx on analytics_item_day (item_id, day desc, last_event_id desc)',
    );
    this.addSql('alter table analytics_item_day drop column if exists cum_entries');
  }
}
