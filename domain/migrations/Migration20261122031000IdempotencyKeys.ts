import { Migration } from '@mikro-orm/migrations';

/**
 * Stored responses of writes sent with an `Idempotency-Key`, scoped per user. The row is inserted in the same
 * transaction as the write's effect, so a key maps to exactly one effect; concurrent repeats block on the
 * primary key until the first commits, then replay its response. Kept 24 h.
 */
export class Migration20261122031000IdempotencyKeys extends Migration {
  override up(): void {
    this.addSql(`
      create table idempotency_key (
        user_id integer not null references app_user (id) on delete cascade,
        key varchar(255) not null,
        fingerprint char(64) not null,
        response_status integer not null,
        response_body text,
        response_headers jsonb not null default '{}'::jsonb,
        created_at timestamptz not null default now(),
        primary key (user_id, key)
      )`);
    this.addSql('create index idempotency_key_created_at_idx on idempotency_key (created_at)');
  }

  override down(): void {
    this.addSql('drop table if exists idempotency_key');
  }
}
