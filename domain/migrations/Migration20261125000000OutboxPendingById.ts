import { Migration } from '@mikro-orm/migrations';

/**
 * A BRIN index on `outbox_pending (id)` for the daily purge of events every consumer is done with
 * (domain/outbox/purge-outbox.ts), which deletes their progress rows by id range. Progress rows are appended in
 * about id order, so a block-range index finds a range's rows in a few pages, and it costs the write path
 * almost nothing (a b-tree would add an index entry to each of the three rows every stock change writes).
 */
export class Migration20261125000000OutboxPendingById extends Migration {
  override up(): void {
    this.addSql(
      'create index outbox_pending_id_brin on outbox_pending using brin (id) with (pages_per_range = 16)',
    );
  }

  override down(): void {
    this.addSql('drop index outbox_pending_id_brin');
  }
}
