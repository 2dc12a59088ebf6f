import { Migration } from '@mikro-orm/migrations';

const SUMS = [
  'entries',
  'qty_in',
  'qty_out',
  'purchases_qty',
  'purchases_cost',
  'returns_in_qty',
  'returns_in_cost',
  'cogs_qty',
  'cogs_cost',
  'write_off_qty',
  'write_off_cost',
];
const type = (c: string) => (c.endsWith('_cost') ? 'numeric(24, 4)' : 'bigint');

/**
 * The supplier buckets summed over all suppliers, per UTC day or month and `slot` (the items' outbox partition,
 * as in migration RollupSlots): the windows without a supplier (N6, N9's movement, N11's buckets) read at most 16
 * rows a day or month instead of suppliers x 16. Back-filled from the supplier buckets in slot 0.
 */
export class Migration20261126121000BucketTotals extends Migration {
  override up(): void {
    for (const [table, key, source] of [
      ['analytics_total_day', 'day', 'analytics_supplier_day'],
      ['analytics_total_month', 'month', 'analytics_supplier_month'],
    ]) {
      this.addSql(`
        create table ${table} (
          ${key} date not null, slot smallint not null,
          ${SUMS.map(c => `${c} ${type(c)} not null default 0`).join(', ')},
          primary key (${key}, slot))`);
      this.addSql(`
        insert into ${table} (${key}, slot, ${SUMS.join(', ')})
        select ${key}, 0, ${SUMS.map(c => `sum(${c})`).join(', ')} from ${source} group by 1`);
    }
  }

  override down(): void {
    this.addSql('drop table if exists analytics_total_month');
    this.addSql('drop table if exists analytics_total_day');
  }
}
