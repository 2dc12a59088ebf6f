import { Migration } from '@mikro-orm/migrations';

const SUMS = `entries bigint not null, increase bigint not null, decrease bigint not null`;

/**
 * Reason totals whose size does not grow with activity, for the reason breakdown (X1) without an item-name
 * filter: per (supplier, UTC day, reason) and per (UTC day, reason) over all suppliers, each with the `slot` of
 * the shared rollups (`hashtext(item id) & 15`, the items' outbox partition: two consumer runs never write the
 * same row; migration RollupSlots). `analytics_reason_day` holds a row per (item, day, supplier, reason), so a
 * window read every item's rows of its days; these hold at most suppliers x reasons x 16 rows a day. Back-filled
 * from `analytics_reason_day` in slot 0, as the rebuild derives them.
 */
export class Migration20261126120000ReasonSupplierRollups extends Migration {
  override up(): void {
    this.addSql(`
      create table analytics_reason_supplier_day (
        supplier_key uuid not null, day date not null, reason varchar(40) not null, slot smallint not null,
        ${SUMS}, primary key (supplier_key, day, reason, slot))`);
    this.addSql(`
      create table analytics_reason_total_day (
        day date not null, reason varchar(40) not null, slot smallint not null,
        ${SUMS}, primary key (day, reason, slot))`);
    this.addSql(`
      insert into analytics_reason_supplier_day
      select supplier_key, day, reason, 0, sum(entries), sum(increase), sum(decrease)
      from analytics_reason_day group by 1, 2, 3`);
    this.addSql(`
      insert into analytics_reason_total_day
      select day, reason, 0, sum(entries), sum(increase), sum(decrease)
      from analytics_reason_supplier_day group by 1, 2`);
  }

  override down(): void {
    this.addSql('drop table if exists analytics_reason_total_day');
    this.addSql('drop table if exists analytics_reason_supplier_day');
  }
}
