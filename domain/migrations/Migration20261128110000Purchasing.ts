import { Migration } from '@mikro-orm/migrations';

/**
 * Purchasing (contract purchasing-api.md, section Records):
 * - `supplier.lead_time_days` (null = REPLENISHMENT_DEFAULT_LEAD_DAYS);
 * - `inventory_item.on_order_quantity`: what ORDERED and PARTIALLY_RECEIVED orders still bring, kept in the
 *   transaction of each order, receipt and cancellation (the integrity check compares it with the lines);
 *   `reorder_point` / `order_up_to_quantity` (null = computed), with order-up-to above the reorder point when
 *   both are set; both are item state, so `item_change` records them too;
 * - `stock_history.purchase_order_id`: the order a receipt's entry belongs to (its `unit_cost` is the line's);
 * - orders, their lines (one per item; no foreign key to the item: a DRAFT keeps a line whose item was deleted),
 *   receipts and their lines (each with the history entry id reserved in the receiving request).
 * Orders restrict the deletion of their supplier.
 */
export class Migration20261128110000Purchasing extends Migration {
  override up(): void {
    this.addSql(
      'alter table supplier add column lead_time_days integer check (lead_time_days between 0 and 365)',
    );
    this.addSql(`
      alter table inventory_item
        add column on_order_quantity integer not null default 0 check (on_order_quantity >= 0),
        add column reorder_point integer check (reorder_point between 0 and 999999),
        add column order_up_to_quantity integer check (order_up_to_quantity between 0 and 999999),
        add constraint inventory_item_order_levels_ck
          check (reorder_point is null or order_up_to_quantity is null or order_up_to_quantity > reorder_point)`);
    this.addSql(
      'alter table item_change add column reorder_point integer, add column order_up_to_quantity integer',
    );
    this.addSql('alter table stock_history add column purchase_order_id uuid');

    this.addSql('create sequence purchase_order_number_seq');
    this.addSql(`
      create table purchase_order (
        id uuid primary key default gen_random_uuid(),
        number varchar(24) not null unique,
        supplier_id uuid not null references supplier (id) on delete restrict,
        status varchar(20) not null default 'DRAFT'
          check (status in ('DRAFT', 'ORDERED', 'PARTIALLY_RECEIVED', 'RECEIVED', 'CANCELLED')),
        note varchar(500),
        expected_at date,
        total_cost numeric(14, 2) not null default 0 check (total_cost <= 99999999999.99),
        created_by varchar(320) not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        ordered_at timestamptz,
        received_at timestamptz,
        cancelled_at timestamptz,
        version integer not null default 1
      )`);
    this.addSql('create index purchase_order_created_at_idx on purchase_order (created_at, id)');
    this.addSql('create index purchase_order_supplier_idx on purchase_order (supplier_id, created_at)');
    this.addSql('create index purchase_order_status_idx on purchase_order (status, created_at)');

    this.addSql(`
      create table purchase_order_line (
        id bigint generated always as identity primary key,
        purchase_order_id uuid not null references purchase_order (id) on delete cascade,
        item_id uuid not null,
        item_name varchar(255) not null,
        sku varchar(64),
        quantity_ordered integer not null check (quantity_ordered between 1 and 999999),
        quantity_received integer not null default 0
          check (quantity_received >= 0 and quantity_received <= quantity_ordered),
        unit_cost numeric(12, 2) not null check (unit_cost between 0.01 and 10000000),
        unique (purchase_order_id, item_id)
      )`);
    this.addSql('create index purchase_order_line_item_idx on purchase_order_line (item_id)');

    this.addSql(`
      create table purchase_receipt (
        id uuid primary key default gen_random_uuid(),
        purchase_order_id uuid not null references purchase_order (id) on delete restrict,
        note varchar(500),
        received_by varchar(320) not null,
        received_at timestamptz not null default now()
      )`);
    this.addSql(
      'create index purchase_receipt_order_idx on purchase_receipt (purchase_order_id, received_at)',
    );
    this.addSql(`
      create table purchase_receipt_line (
        id bigint generated always as identity primary key,
        receipt_id uuid not null references purchase_receipt (id) on delete cascade,
        item_id uuid not null,
        quantity integer not null check (quantity between 1 and 999999),
        entry_id bigint not null unique,
        unique (receipt_id, item_id)
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists purchase_receipt_line');
    this.addSql('drop table if exists purchase_receipt');
    this.addSql('drop table if exists purchase_order_line');
    this.addSql('drop table if exists purchase_order');
    this.addSql('drop sequence if exists purchase_order_number_seq');
    this.addSql('alter table stock_history drop column if exists purchase_order_id');
    this.addSql(
      'alter table item_change drop column if exists reorder_point, drop column if exists order_up_to_quantity',
    );
    this.addSql(`
      alter table inventory_item drop constraint if exists inventory_item_order_levels_ck,
        drop column if exists on_order_quantity, drop column if exists reorder_point,
        drop column if exists order_up_to_quantity`);
    this.addSql('alter table supplier drop column if exists lead_time_days');
  }
}
