import { Migration } from '@mikro-orm/migrations';

/** The rollups every item of a supplier (or a user) adds to, with the columns of their keys and sums. */
const SHARED_ROLLUPS = [
  { table: 'analytics_supplier_day', key: ['day', 'supplier_key'] },
  { table: 'analytics_supplier_month', key: ['month', 'supplier_key'] },
  { table: 'analytics_user_day', key: ['day', 'supplier_key', 'created_by'] },
];

const SUMS: Record<string, string[]> = {
  analytics_supplier_day: [
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
  ],
  analytics_user_day: ['entries'],
};
SUMS.analytics_supplier_month = SUMS.analytics_supplier_day;

/**
 * The rollups shared by all items of a supplier get a `slot`: the outbox partition of the items that wrote the
 * row (`hashtext(item id) & 15`, as `outbox_event.part`), part of the primary key. Two consumer runs hold
 * different partitions, so they never write the same row: before, the analytics fold's two job slots and the
 * worker processes waited on each other's supplier day and month rows (and user rows) until commit (the
 * analytics write statement was the one most often seen waiting on a row lock while two workers drained).
 * Reads sum over the slots (every reader already sums the rows of a window). The rebuild derives the supplier
 * buckets per slot too and writes its user rows in slot 0.
 */
export class Migration20261124000000RollupSlots extends Migration {
  override up(): void {
    for (const { table, key } of SHARED_ROLLUPS) {
      this.addSql(`alter table ${table} add column slot smallint not null default 0`);
      this.addSql(`alter table ${table} drop constraint ${table}_pkey`);
      this.addSql(`alter table ${table} add primary key (${[...key, 'slot'].join(', ')})`);
    }
  }

  override down(): void {
    for (const { table, key } of SHARED_ROLLUPS) {
      const sums = SUMS[table];
      this.addSql(`
        with merged as (delete from ${table} returning *)
        insert into ${table} (${[...key, ...sums, 'slot'].join(', ')})
        select ${key.join(', ')}, ${sums.map(c => `sum(${c})`).join(', ')}, 0 from merged group by ${key.join(', ')}`);
      this.addSql(`alter table ${table} drop constraint ${table}_pkey`);
      this.addSql(`alter table ${table} drop column slot`);
      this.addSql(`alter table ${table} add primary key (${key.join(', ')})`);
    }
  }
}
