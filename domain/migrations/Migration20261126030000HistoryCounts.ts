import { Migration } from '@mikro-orm/migrations';

const NO_SUPPLIER = '00000000-0000-0000-0000-000000000000';
const DAY = `("timestamp" at time zone 'UTC')::date`;
const MONTH = `date_trunc('month', "timestamp" at time zone 'UTC')::date`;

/** Each count table: its key columns, the expressions over history rows that fill them. */
const COUNTS = [
  {
    table: 'history_count_day',
    key: ['day', 'supplier_key', 'reason'],
    from: [DAY, `coalesce(supplier_id, '${NO_SUPPLIER}')`, 'reason'],
  },
  {
    table: 'history_count_month',
    key: ['month', 'supplier_key', 'reason'],
    from: [MONTH, `coalesce(supplier_id, '${NO_SUPPLIER}')`, 'reason'],
  },
  {
    table: 'history_count_item',
    key: ['item_id', 'month', 'supplier_key', 'item_name'],
    from: ['item_id', MONTH, `coalesce(supplier_id, '${NO_SUPPLIER}')`, 'item_name'],
  },
];

const upsert = (c: (typeof COUNTS)[number], source: string) => `
  insert into ${c.table} (${c.key.join(', ')}, entries)
  select ${c.from.join(', ')}, count(*) from ${source}
  group by ${c.from.map((_, i) => i + 1).join(', ')} order by ${c.from.map((_, i) => i + 1).join(', ')}
  on conflict (${c.key.join(', ')}) do update set entries = ${c.table}.entries + excluded.entries`;

/**
 * Entry counts of the stock history, so the total of any history read (H1-H4) is a sum of a few count rows
 * plus the entries of its ragged ends, never a count of the history: per (UTC day | month, supplier, reason)
 * for reads without an item, and per (item, month, supplier, name) for reads of an item or of an item name
 * (no read filters an item by reason). `history_item_name` holds every (item, name) of the history, so an item-name substring is resolved on
 * that small table first. A statement-level trigger keeps them in the same statement that appends entries
 * (whatever writes them: the consumer, an import, a fill in SQL), so in any snapshot they equal the history.
 * Rows are upserted in key order, so two writers wait on each other instead of deadlocking.
 */
export class Migration20261126030000HistoryCounts extends Migration {
  override up(): void {
    this.addSql(`
      create table history_count_day (
        day date not null, supplier_key uuid not null, reason varchar(40) not null, entries bigint not null,
        primary key (day, supplier_key, reason))`);
    this.addSql(`
      create table history_count_month (
        month date not null, supplier_key uuid not null, reason varchar(40) not null, entries bigint not null,
        primary key (month, supplier_key, reason))`);
    this.addSql(`
      create table history_count_item (
        item_id uuid not null, month date not null, supplier_key uuid not null, item_name varchar(255) not null,
        entries bigint not null, primary key (item_id, month, supplier_key, item_name))`);
    this.addSql(`
      create table history_item_name (
        item_id uuid not null, item_name varchar(255) not null, primary key (item_id, item_name))`);
    for (const c of COUNTS) this.addSql(upsert(c, 'stock_history'));
    this.addSql(
      'insert into history_item_name select distinct item_id, item_name from stock_history on conflict do nothing',
    );
    this.addSql(`
      create function stock_history_count() returns trigger language plpgsql as $$
      begin
        ${COUNTS.map(c => `${upsert(c, 'appended')};`).join('\n')}
        insert into history_item_name select distinct item_id, item_name from appended order by 1, 2
        on conflict do nothing;
        return null;
      end $$`);
    this.addSql(`
      create trigger stock_history_count after insert on stock_history
      referencing new table as appended for each statement execute function stock_history_count()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists stock_history_count on stock_history');
    this.addSql('drop function if exists stock_history_count');
    for (const t of ['history_item_name', 'history_count_item', 'history_count_month', 'history_count_day'])
      this.addSql(`drop table if exists ${t}`);
  }
}
