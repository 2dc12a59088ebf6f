import { Migration } from '@mikro-orm/migrations';

/**
 * R1 reads only the items that are due (purchasing contract, "How a suggestion is computed"): the run writes,
 * besides `replenishment_level`, the terms of an item's due threshold and order-by date onto the item row
 * (`replenishment_*`, null when the run saw no demand), so that one partial index holds exactly the items whose
 * `quantity + on_order_quantity` is at or below their effective reorder point, keyed by the order-by date's
 * distance from today, then name (R1's order). The index follows every later change of the quantity, the
 * on-order quantity, the minimum and the own levels at once (it is over the row's current columns); only the
 * run changes the demand terms. A second index leads with the supplier, for R1's supplier filter and R3.
 */
const DUE = `inventory_item.quantity + inventory_item.on_order_quantity <= least(999998, coalesce(
    inventory_item.reorder_point,
    greatest(inventory_item.minimum_quantity, coalesce(inventory_item.replenishment_reorder_point, 0))))
  and (inventory_item.replenishment_window_demand is not null
    or inventory_item.quantity < inventory_item.minimum_quantity or inventory_item.reorder_point is not null)`;
const ORDER_KEY = `case when inventory_item.replenishment_window_demand > 0 then greatest(0,
    inventory_item.quantity::bigint * inventory_item.replenishment_window_days
      / inventory_item.replenishment_window_demand - inventory_item.replenishment_lead_days) end`;

/** The texts of domain/replenishment/due-items.ts as of this migration (a test holds R1's plan to the index). */
export class Migration20261128130000ReplenishmentDue extends Migration {
  override up(): void {
    this.addSql(`
      alter table inventory_item
        add column replenishment_window_days integer,
        add column replenishment_window_demand bigint check (replenishment_window_demand > 0),
        add column replenishment_lead_days integer,
        add column replenishment_reorder_point bigint`);
    this.addSql(
      `create index inventory_item_replenishment_due_idx on inventory_item ((${ORDER_KEY}), name, id)
       where ${DUE}`,
    );
    this.addSql(
      `create index inventory_item_replenishment_due_supplier_idx
       on inventory_item (supplier_id, (${ORDER_KEY}), name, id) where ${DUE}`,
    );
  }

  override down(): void {
    this.addSql('drop index if exists inventory_item_replenishment_due_supplier_idx');
    this.addSql('drop index if exists inventory_item_replenishment_due_idx');
    this.addSql(`
      alter table inventory_item drop column replenishment_window_days, drop column replenishment_window_demand,
        drop column replenishment_lead_days, drop column replenishment_reorder_point`);
  }
}
