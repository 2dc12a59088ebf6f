import { Migration } from '@mikro-orm/migrations';

/**
 * `stock_history.writer_xact`: the id of the transaction that wrote the entry (whatever writes it: the
 * consumer, an import, a fill in SQL; the column default), so a cursor walk can ask whether an entry existed in
 * its first page's snapshot (`pg_visible_in_snapshot`) instead of inferring it from id order, which reserved
 * entry ids (reversals, written later by the consumer) break. It is the row's own writer, not the transaction
 * that reserved its id or wrote its outbox event: the entry and its count rows (HistoryCounts trigger) appear in
 * the consumer's commit, so that commit is what a first page's total saw or did not see. Null for the entries
 * written before this migration, which every later snapshot sees. Added without a default first, so existing
 * rows stay null and the table is not rewritten.
 */
export class Migration20261128100000HistoryWriter extends Migration {
  override up(): void {
    this.addSql('alter table stock_history add column writer_xact xid8');
    this.addSql('alter table stock_history alter column writer_xact set default pg_current_xact_id()');
  }

  override down(): void {
    this.addSql('alter table stock_history drop column if exists writer_xact');
  }
}
