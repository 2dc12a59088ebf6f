import { Migration } from '@mikro-orm/migrations';

/**
 * Products of the product API. The database enforces what the numbers depend on: quantity >= 0, price >= 0.01
 * with two decimals, names unique case-insensitively (a product may be renamed to a case variant of its own
 * name: same row), SKUs unique case-insensitively.
 */
export class Migration20261122020000Catalog extends Migration {
  override up(): void {
    this.addSql(`
      create table product (
        id bigserial primary key,
        name varchar(255) not null constraint product_name_not_blank check (length(trim(name)) > 0),
        quantity integer not null constraint product_quantity_non_negative check (quantity >= 0),
        price numeric(12, 2) not null constraint product_price_min check (price >= 0.01),
        sku varchar(50) not null constraint product_sku_not_blank check (length(trim(sku)) > 0),
        category varchar(100),
        description varchar(1000),
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql('create unique index product_name_uq on product (lower(name))');
    this.addSql('create unique index product_sku_uq on product (lower(sku))');
    this.addSql('create index product_low_stock_idx on product (quantity)');
  }

  override down(): void {
    this.addSql('drop table if exists product');
  }
}
