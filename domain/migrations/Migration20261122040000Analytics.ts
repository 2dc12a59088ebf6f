import { Migration } from '@mikro-orm/migrations';

/**
 * Analytics rollups and low-stock alerts. The analytics consumer folds every `stock.changed` event into
 * per-(item, UTC day, supplier) rows, so every analytics endpoint reads O(days x items) rows and never the
 * whole history. Money is exact: prices numeric(12,2), weighted-average costs numeric(14,4), cost sums
 * numeric(24,4), rounded half-up to cents only at output. `supplier_key` is the supplier of the event (the nil
 * UUID when an event has none), so supplier filters are exact even when an item changes supplier.
 */
export class Migration20261122040000Analytics extends Migration {
  override up(): void {
    // Per-item state after the last folded event (the weighted-average-cost running state).
    this.addSql(`
      create table analytics_item (
        item_id uuid primary key,
        wac_q integer not null default 0,
        wac_c numeric(14, 4) not null default 0,
        last_event_id bigint not null default 0
      )`);

    this.addSql(`
      create table analytics_item_day (
        item_id uuid not null,
        day date not null,
        supplier_key uuid not null,
        supplier_name varchar(255),
        item_name varchar(255) not null,
        entries integer not null default 0,
        qty_in bigint not null default 0,
        qty_out bigint not null default 0,
        price_sum numeric(20, 2) not null default 0,
        closing_quantity integer not null,
        closing_price numeric(12, 2) not null,
        wac_q integer not null,
        wac_c numeric(14, 4) not null,
        purchases_qty bigint not null default 0,
        purchases_cost numeric(24, 4) not null default 0,
        returns_in_qty bigint not null default 0,
        returns_in_cost numeric(24, 4) not null default 0,
        cogs_qty bigint not null default 0,
        cogs_cost numeric(24, 4) not null default 0,
        write_off_qty bigint not null default 0,
        write_off_cost numeric(24, 4) not null default 0,
        last_event_id bigint not null,
        primary key (item_id, day, supplier_key)
      )`);
    this.addSql('create index analytics_item_day_day_idx on analytics_item_day (day)');
    this.addSql(
      'create index analytics_item_day_latest_idx on analytics_item_day (item_id, day desc, last_event_id desc)',
    );
    this.addSql('create index analytics_item_day_supplier_idx on analytics_item_day (supplier_key, day)');

    this.addSql(`
      create table analytics_reason_day (
        item_id uuid not null,
        day date not null,
        supplier_key uuid not null,
        reason varchar(40) not null,
        item_name varchar(255) not null,
        entries integer not null default 0,
        increase bigint not null default 0,
        decrease bigint not null default 0,
        primary key (item_id, day, supplier_key, reason)
      )`);
    this.addSql('create index analytics_reason_day_day_idx on analytics_reason_day (day)');

    this.addSql(`
      create table analytics_user_day (
        day date not null,
        supplier_key uuid not null,
        created_by varchar(320) not null,
        entries integer not null default 0,
        primary key (day, supplier_key, created_by)
      )`);

    // Nightly closing snapshot of the current state (what the clock's nightly job records).
    this.addSql(`
      create table analytics_daily_snapshot (
        day date not null,
        supplier_id uuid not null,
        total_quantity bigint not null,
        total_value numeric(24, 2) not null,
        taken_at timestamptz not null default now(),
        primary key (day, supplier_id)
      )`);

    // Consumers pick an item's pending events in id order; these keep that lookup on the pending rows only.
    this.addSql(
      'create index outbox_analytics_pending_item_idx on outbox_event (aggregate_id, id) where analytics_done_at is null',
    );
    this.addSql(
      'create index outbox_alerts_pending_item_idx on outbox_event (aggregate_id, id) where alerts_done_at is null',
    );

    this.addSql(`
      create table low_stock_alert (
        id bigserial primary key,
        item_id uuid not null,
        item_name varchar(255) not null,
        supplier_id uuid,
        quantity integer not null,
        minimum_quantity integer not null,
        raised_at timestamptz not null,
        closed_at timestamptz,
        open_event_id bigint not null unique,
        close_event_id bigint
      )`);
    this.addSql(
      'create unique index low_stock_alert_open_uq on low_stock_alert (item_id) where closed_at is null',
    );

    this.addSql(`
      create table webhook_delivery (
        id bigserial primary key,
        alert_id bigint not null references low_stock_alert (id) on delete cascade,
        event_type varchar(60) not null,
        url text not null,
        payload jsonb not null,
        status varchar(20) not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
        attempts integer not null default 0,
        last_error text,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        delivered_at timestamptz
      )`);
    this.addSql(
      "create index webhook_delivery_pending_idx on webhook_delivery (id) where status = 'pending'",
    );
  }

  override down(): void {
    this.addSql('drop table if exists webhook_delivery');
    this.addSql('drop table if exists low_stock_alert');
    this.addSql('drop index if exists outbox_alerts_pending_item_idx');
    this.addSql('drop index if exists outbox_analytics_pending_item_idx');
    this.addSql('drop table if exists analytics_daily_snapshot');
    this.addSql('drop table if exists analytics_user_day');
    this.addSql('drop table if exists analytics_reason_day');
    this.addSql('drop table if exists analytics_item_day');
    this.addSql('drop table if exists analytics_item');
  }
}
