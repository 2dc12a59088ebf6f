import { Migration } from '@mikro-orm/migrations';

/**
 * Partitions of the outbox for batched, scaled-out consumers. Every event belongs to one of 16 partitions by a
 * hash of its aggregate (the item), so an item's events stay in one partition and keep their order; a consumer
 * folds one partition at a time under an advisory lock, and several worker processes share the partitions.
 * The pending indexes are per partition, so "what is pending in partition p, oldest first" is one index range;
 * the per-item pending indexes go (a consumer reads by partition now, and every index costs the write path).
 */
export class Migration20261123000000OutboxPartitions extends Migration {
  override up(): void {
    this.addSql(
      'alter table outbox_event add column part smallint generated always as ((hashtext(aggregate_id) & 15)::smallint) stored',
    );
    this.addSql('drop index if exists outbox_alerts_pending_item_idx');
    this.addSql('drop index if exists outbox_analytics_pending_item_idx');
    for (const marker of ['history', 'alerts', 'analytics']) {
      this.addSql(`drop index if exists outbox_${marker}_pending_idx`);
      this.addSql(
        `create index outbox_${marker}_pending_idx on outbox_event (part, id) where ${marker}_done_at is null`,
      );
    }
  }

  override down(): void {
    for (const marker of ['history', 'alerts', 'analytics']) {
      this.addSql(`drop index if exists outbox_${marker}_pending_idx`);
      this.addSql(
        `create index outbox_${marker}_pending_idx on outbox_event (id) where ${marker}_done_at is null`,
      );
    }
    for (const marker of ['alerts', 'analytics'])
      this.addSql(
        `create index outbox_${marker}_pending_item_idx on outbox_event (aggregate_id, id) where ${marker}_done_at is null`,
      );
    this.addSql('alter table outbox_event drop column part');
  }
}
