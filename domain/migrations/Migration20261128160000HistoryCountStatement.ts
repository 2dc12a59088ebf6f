import { Migration } from '@mikro-orm/migrations';

const NO_SUPPLIER = '00000000-0000-0000-0000-000000000000';
const DAY = `("timestamp" at time zone 'UTC')::date`;
const MONTH = `date_trunc('month', "timestamp" at time zone 'UTC')::date`;
const HOUR = `date_trunc('hour', "timestamp" at time zone 'UTC')`;

/** Each count table of HistoryCounts and HistoryHourCounts: its key columns, the expressions that fill them. */
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
  { table: 'history_count_hour', key: ['hour'], from: [HOUR] },
];

const upsert = (c: (typeof COUNTS)[number], source: string) => `
  insert into ${c.table} (${c.key.join(', ')}, entries)
  select ${c.from.join(', ')}, count(*) from ${source}
  group by ${c.from.map((_, i) => i + 1).join(', ')} order by ${c.from.map((_, i) => i + 1).join(', ')}
  on conflict (${c.key.join(', ')}) do update set entries = ${c.table}.entries + excluded.entries`;

const ITEM_NAMES = (source: string) => `
  insert into history_item_name select distinct item_id, item_name from ${source} order by 1, 2
  on conflict do nothing`;

/**
 * The history's count rows (HistoryCounts, HistoryHourCounts) kept by ONE statement-level trigger whose function
 * runs ONE statement: the four count upserts as data-modifying CTEs of the item-name insert. Before, two
 * triggers ran five statements for every statement that appended entries, each with its own snapshot, command
 * counter step, executor start and end; the consumer appends a batch every few milliseconds. The same rows are
 * written (whatever appends entries: the consumer, an import, a fill in SQL), in the same statement that appends
 * them, so in any snapshot they still equal the history. Every writer runs the same statement, so the tables
 * are written in one fixed order, each in key order: two writers wait on each other instead of deadlocking.
 */
export class Migration20261128160000HistoryCountStatement extends Migration {
  override up(): void {
    this.addSql('drop trigger if exists stock_history_count_hour on stock_history');
    this.addSql('drop function if exists stock_history_count_hour');
    this.addSql(`
      create or replace function stock_history_count() returns trigger language plpgsql as $$
      begin
        with ${COUNTS.map((c, i) => `c${i} as (${upsert(c, 'appended')})`).join(',\n')}
        ${ITEM_NAMES('appended')};
        return null;
      end $$`);
  }

  override down(): void {
    const [day, month, item, hour] = COUNTS;
    this.addSql(`
      create or replace function stock_history_count() returns trigger language plpgsql as $$
      begin
        ${[day, month, item].map(c => `${upsert(c, 'appended')};`).join('\n')}
        ${ITEM_NAMES('appended')};
        return null;
      end $$`);
    this.addSql(`
      create function stock_history_count_hour() returns trigger language plpgsql as $$
      begin
        ${upsert(hour, 'appended')};
        return null;
      end $$`);
    this.addSql(`
      create trigger stock_history_count_hour after insert on stock_history
      referencing new table as appended for each statement execute function stock_history_count_hour()`);
  }
}
