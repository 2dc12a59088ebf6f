import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger (contract, section "Ledger"):
 * - `item_change`: one row per change of an item (created, updated, deleted), written in the transaction of the
 *   change with the item's new state and `version`. `xid` is the row's place in the change feed: the writing
 *   transaction's id (or its item's previous place when larger, domain/inventory/item-change.ts). The feed hands
 *   out rows in (xid, id) order and only below the oldest running transaction (pg_snapshot_xmin), so a row can
 *   never appear behind a cursor that has passed it. The (item, at) index answers "the item as it was then".
 *   Rows are kept: point-in-time reads need them however old (the feed's cursors expire after 30 days).
 * - `stock_history` gains `reversal_of`, `unit_cost` (the original's unit cost a reversal is booked at) and `note`.
 * - `stock_reversal`: the link row keyed by the original entry's id, written in the reversing request's
 *   transaction; its primary key refuses a second reversal however concurrent (the history stays append-only).
 * Existing items get a `created` row with their current state at their last update.
 */
export class Migration20261126060000Ledger extends Migration {
  override up(): void {
    this.addSql(`
      create table item_change (
        xid xid8 not null default pg_current_xact_id(),
        id bigint generated always as identity,
        item_id uuid not null,
        kind varchar(8) not null check (kind in ('created', 'updated', 'deleted')),
        version integer not null,
        at timestamptz not null,
        name varchar(255) not null,
        sku varchar(64),
        quantity integer not null,
        price numeric(12, 2) not null,
        minimum_quantity integer not null,
        supplier_id uuid not null,
        primary key (xid, id)
      )`);
    // An item's changes in time order, covering what the point-in-time value and the feed place read (index-only
    // probes: a heap fetch per item grows with the history, whose rows of one item lie far apart), and the items
    // by creation time (one entry per item) that the value read walks.
    this.addSql(
      'create index item_change_item_at_idx on item_change (item_id, at, id) include (xid, kind, quantity, price, supplier_id)',
    );
    this.addSql(
      "create index item_change_created_idx on item_change (at) include (item_id) where kind = 'created'",
    );
    // Volatile plpgsql: its query takes a snapshot of its own (READ COMMITTED), after the caller's row lock, so it
    // sees the item's previous change even when that committed while the caller's statement waited for the lock.
    this.addSql(`
      create function item_change_place(item uuid) returns xid8 language plpgsql volatile as $$
      begin
        return greatest(pg_current_xact_id(), coalesce((select p.xid from item_change p where p.item_id = item
                                                          order by p.at desc, p.id desc limit 1), '0'::xid8));
      end $$`);
    this.addSql(`
      insert into item_change (item_id, kind, version, at, name, sku, quantity, price, minimum_quantity, supplier_id)
      select id, 'created', version, updated_at, name, sku, quantity, price, minimum_quantity, supplier_id
        from inventory_item order by updated_at`);

    this.addSql(
      'alter table stock_history add column reversal_of bigint, add column unit_cost numeric(14, 4), add column note varchar(500)',
    );
    this.addSql(`
      create table stock_reversal (
        original_id bigint primary key,
        reversal_entry_id bigint not null unique,
        created_by varchar(320) not null,
        created_at timestamptz not null default now()
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists stock_reversal');
    this.addSql(
      'alter table stock_history drop column if exists reversal_of, drop column if exists unit_cost, drop column if exists note',
    );
    this.addSql('drop function if exists item_change_place');
    this.addSql('drop table if exists item_change');
  }
}
