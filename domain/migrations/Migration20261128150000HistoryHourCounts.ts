import { Migration } from '@mikro-orm/migrations';

const HOUR = `date_trunc('hour', "timestamp" at time zone 'UTC')`;

const upsert = (source: string) => `
  insert into history_count_hour (hour, entries)
  select ${HOUR}, count(*) from ${source} group by 1 order by 1
  on conflict (hour) do update set entries = history_count_hour.entries + excluded.entries`;

/**
 * Entry counts of the stock history per UTC hour, beside the day and month counts (HistoryCounts): a deep page
 * newest first without filters finds its month, its day, then its hour from count rows, and reads at most one
 * hour past instead of one day (a day holds thousands of entries in a busy history). Without supplier or reason
 * in the key: the pages that filter by them find their day from the day counts, where a day of one supplier or
 * reason holds a fraction of the entries, and the table stays one row per hour of history. A statement-level
 * trigger of its own keeps it in the statement that appends entries (whatever writes them), so in any snapshot
 * it equals the history; rows are upserted in key order.
 */
export class Migration20261128150000HistoryHourCounts extends Migration {
  override up(): void {
    this.addSql(`
      create table history_count_hour (
        hour timestamp not null primary key, entries bigint not null)`);
    this.addSql(upsert('stock_history'));
    this.addSql(`
      create function stock_history_count_hour() returns trigger language plpgsql as $$
      begin
        ${upsert('appended')};
        return null;
      end $$`);
    this.addSql(`
      create trigger stock_history_count_hour after insert on stock_history
      referencing new table as appended for each statement execute function stock_history_count_hour()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists stock_history_count_hour on stock_history');
    this.addSql('drop function if exists stock_history_count_hour');
    this.addSql('drop table if exists history_count_hour');
  }
}
