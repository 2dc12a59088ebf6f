import { Migration } from '@mikro-orm/migrations';

/**
 * The contract's caps (price 0.01..10,000,000.00, quantity 0..999,999, for items and products alike) as checks,
 * so no write path (an import included) can store a total that a JSON number cannot hold to the cent. NOT VALID:
 * rows written before the caps are not scanned now; each is checked when it is next changed.
 */
export class Migration20261126020000MoneyCaps extends Migration {
  override up(): void {
    this.addSql(`alter table inventory_item
      add constraint inventory_item_price_max check (price <= 10000000) not valid,
      add constraint inventory_item_quantity_max check (quantity <= 999999) not valid,
      add constraint inventory_item_minimum_quantity_max check (minimum_quantity <= 999999) not valid`);
    this.addSql(`alter table product
      add constraint product_price_max check (price <= 10000000) not valid,
      add constraint product_quantity_max check (quantity <= 999999) not valid`);
  }

  override down(): void {
    this.addSql(`alter table inventory_item
      drop constraint inventory_item_price_max,
      drop constraint inventory_item_quantity_max,
      drop constraint inventory_item_minimum_quantity_max`);
    this.addSql(
      'alter table product drop constraint product_price_max, drop constraint product_quantity_max',
    );
  }
}
