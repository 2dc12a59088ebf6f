import { Migration } from '@mikro-orm/migrations';

/**
 * Suppliers, inventory items, the transactional outbox and the append-only stock history.
 * Every guarantee the numbers depend on lives in the database: non-negative quantities, prices >= 0.01,
 * case-insensitive unique names, RESTRICT on supplier delete, one history entry per outbox event.
 */
export class Migration20261122030000Inventory extends Migration {
  override up(): void {
    this.addSql(`
      create table supplier (
        id uuid primary key default gen_random_uuid(),
        name varchar(255) not null check (length(trim(name)) > 0),
        contact_name varchar(255),
        phone varchar(50),
        email varchar(320),
        created_by varchar(320) not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql('create unique index supplier_name_uq on supplier (lower(name))');
    this.addSql('create index supplier_created_at_idx on supplier (created_at)');

    this.addSql(`
      create table inventory_item (
        id uuid primary key default gen_random_uuid(),
        name varchar(255) not null check (length(trim(name)) > 0),
        sku varchar(64),
        quantity integer not null check (quantity >= 0),
        price numeric(12, 2) not null check (price >= 0.01),
        minimum_quantity integer not null default 0 check (minimum_quantity >= 0),
        supplier_id uuid not null references supplier (id) on delete restrict,
        created_by varchar(320) not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        version integer not null default 1
      )`);
    this.addSql('create unique index inventory_item_name_uq on inventory_item (lower(name))');
    this.addSql(
      'create unique index inventory_item_sku_uq on inventory_item (lower(sku)) where sku is not null',
    );
    this.addSql('create index inventory_item_supplier_idx on inventory_item (supplier_id)');
    this.addSql('create index inventory_item_created_at_idx on inventory_item (created_at)');
    this.addSql(
      'create index inventory_item_below_minimum_idx on inventory_item (supplier_id) where quantity < minimum_quantity',
    );

    // One row per stock event. Each consumer marks its own column in the same transaction as its effect;
    // the sweeper re-enqueues rows whose marker is still null (partial indexes keep that scan tiny).
    this.addSql(`
      create table outbox_event (
        id bigserial primary key,
        type varchar(60) not null,
        aggregate_id varchar(64) not null,
        payload jsonb not null,
        created_at timestamptz not null default now(),
        history_done_at timestamptz,
        alerts_done_at timestamptz,
        analytics_done_at timestamptz
      )`);
    this.addSql('create index outbox_history_pending_idx on outbox_event (id) where history_done_at is null');
    this.addSql('create index outbox_alerts_pending_idx on outbox_event (id) where alerts_done_at is null');
    this.addSql(
      'create index outbox_analytics_pending_idx on outbox_event (id) where analytics_done_at is null',
    );

    this.addSql(`
      create table stock_history (
        id bigserial primary key,
        outbox_event_id bigint not null,
        item_id uuid not null,
        item_name varchar(255) not null,
        supplier_id uuid,
        supplier_name varchar(255),
        change integer not null,
        quantity_before integer not null check (quantity_before >= 0),
        quantity_after integer not null check (quantity_after >= 0),
        reason varchar(40) not null,
        price_at_change numeric(12, 2) not null,
        created_by varchar(320) not null,
        "timestamp" timestamptz not null,
        correlation_id varchar(64),
        constraint stock_history_event_uq unique (outbox_event_id)
      )`);
    this.addSql('create index stock_history_item_ts_idx on stock_history (item_id, "timestamp")');
    this.addSql('create index stock_history_ts_idx on stock_history ("timestamp")');
    this.addSql('create index stock_history_supplier_ts_idx on stock_history (supplier_id, "timestamp")');
    this.addSql('create index stock_history_reason_idx on stock_history (reason, "timestamp")');
    this.addSql(`
      create function stock_history_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'stock_history is append-only' using errcode = 'P0001';
      end $$`);
    this.addSql(`
      create trigger stock_history_no_update_delete before update or delete on stock_history
      for each row execute function stock_history_append_only()`);
    this.addSql(`
      create trigger stock_history_no_truncate before truncate on stock_history
      for each statement execute function stock_history_append_only()`);
  }

  override down(): void {
    this.addSql('drop table if exists stock_history');
    this.addSql('drop function if exists stock_history_append_only');
    this.addSql('drop table if exists outbox_event');
    this.addSql('drop table if exists inventory_item');
    this.addSql('drop table if exists supplier');
  }
}
