import { outboxInsertSql, payloadSql } from '../outbox/outbox-insert.js';
import { isoSql } from '../shared/sql.js';
import {
  checkFields,
  countPlanSql,
  lockTargetsSql,
  markDuplicates,
  nulProblems,
  rejectionsSql,
  toCounts,
  type ImportKind,
  updateTargets,
} from './import-kind.js';
import { createProductBody } from '../catalog/catalog.schemas.js';
import { PRODUCT_QUANTITY_CHANGED, type ProductQuantityChangedPayload } from '../catalog/product-events.js';
import { generateSku } from '../catalog/sku.js';

const COLUMNS = ['name', 'sku', 'quantity', 'price', 'purchasePrice', 'category', 'description'] as const;

interface ProductImportRow {
  name: string;
  sku?: string;
  quantity: number;
  price?: number;
  purchasePrice?: number;
  category?: string | null;
  description?: string | null;
}

/** Whether the row changes its product `p` (a sku, category or description left out keeps the stored one). */
const CHANGES = `(x.name <> p.name or coalesce(x.sku, p.sku) <> p.sku or x.quantity <> p.quantity
  or x.price <> p.price or (x.category is not null and x.category is distinct from p.category)
  or (x.description is not null and x.description is distinct from p.description))`;

/**
 * Each row resolved as the row-by-row import did: its product by sku, else by name. Then the first problem of
 * each row: a name, sku or product the file named before, then a rename onto another product's name.
 */
const PLAN_SQL = `
create temp table import_plan as
with resolved as (
  select r.*, coalesce(s.id, n.id) as target, s.id is not null as by_sku,
         (s.id is not null and n.id is not null and n.id <> s.id) as name_clash,
         g.id is not null as generated_taken
    from import_row r
    left join product s on r.sku is not null and lower(s.sku) = lower(r.sku)
    left join product n on lower(n.name) = lower(r.name)
    left join product g on r.sku is null and lower(g.sku) = lower(r.generated_sku)
)
select * from resolved`;

const REJECT_SQL = rejectionsSql(
  'x.name_clash',
  `(4, 'name', 'product.name.duplicate', jsonb_build_object('name', x.name),
       not d.dup and not d.same_target and x.name_clash)`,
);

/** A generated sku that a product has already (about one in 10^6 at a million products) is drawn again. */
const REDRAW_SKUS_SQL = `
update import_plan x set generated_sku = 'SKU-' || upper(substr(md5(random()::text || x.line), 1, 8))
 where x.target is null and x.sku is null
   and exists (select 1 from product g where lower(g.sku) = lower(x.generated_sku))`;

const COUNT_SQL = countPlanSql('product', 'p', CHANGES);

const LOCK_SQL = lockTargetsSql('product');

/** Known products: the fields that differ; a quantity change writes its event as updateProductFields does. */
const UPDATE_SQL = `
with old as (
  select x.target as id, p.quantity as q0 from import_plan x join product p on p.id = x.target
), changed as (
  update product p
     set name = x.name, sku = coalesce(x.sku, p.sku), quantity = x.quantity, price = x.price,
         category = coalesce(x.category, p.category), description = coalesce(x.description, p.description),
         updated_at = now()
    from import_plan x
   where x.target = p.id and ${CHANGES}
  returning p.id, p.name, p.quantity, p.updated_at
), ${outboxInsertSql('e', {
  type: `'${PRODUCT_QUANTITY_CHANGED}'`,
  aggregateId: 'c.id::text',
  payload: payloadSql<ProductQuantityChangedPayload>({
    productId: 'c.id',
    name: 'c.name',
    quantityBefore: 'o.q0',
    quantityAfter: 'c.quantity',
    change: 'c.quantity - o.q0',
    actor: '$1::text',
    occurredAt: isoSql('c.updated_at'),
  }),
  from: `from changed c join old o on o.id = c.id
   where c.quantity <> o.q0
   order by c.id`,
})}
select (select count(*) from changed)::int as updated, (select count(*) from e)::int as events`;

const INSERT_SQL = `
insert into product (name, quantity, price, sku, category, description)
select name, quantity, price, coalesce(sku, generated_sku), category, description
  from import_plan where target is null order by line`;

/**
 * Products (the product API's fields and rules): a new row is created (with a generated sku when it has
 * none); a known product (by sku, else name) gets the fields that differ, a quantity change being a stock
 * change like any other.
 */
export const PRODUCT_IMPORT: ImportKind = {
  columns: COLUMNS,
  requiredColumns: ['name', 'quantity'],
  stagedColumns: [
    ['name', 'text'],
    ['sku', 'text'],
    ['generated_sku', 'text'],
    ['quantity', 'integer'],
    ['price', 'numeric(12, 2)'],
    ['category', 'text'],
    ['description', 'text'],
  ],
  stage(values, isKey) {
    const nul = nulProblems(values);
    if (nul.length > 0) return nul;
    const checked = checkFields<ProductImportRow>(createProductBody, values, isKey);
    if (Array.isArray(checked)) return checked;
    const row = checked.value;
    return [
      row.name,
      row.sku ?? null,
      row.sku ? null : generateSku(),
      row.quantity,
      String(row.price ?? row.purchasePrice),
      row.category || null,
      row.description || null,
    ];
  },
  async validate(sql) {
    await sql(PLAN_SQL);
    // Statistics for the plan's joins with the (possibly much larger) table: an index lookup per row for a
    // small file, a hash join for a large one.
    await sql('analyze import_plan');
    await markDuplicates(sql);
    await sql(REJECT_SQL);
    await sql('delete from import_plan where line in (select line from import_rejection)');
    if ((await sql('select 1 from import_plan where generated_taken limit 1')).length > 0)
      await sql(REDRAW_SKUS_SQL);
    return toCounts((await sql(COUNT_SQL))[0]);
  },
  async apply(sql, options) {
    const updated = await updateTargets(
      sql,
      LOCK_SQL,
      UPDATE_SQL,
      [options.write.user],
      'a product of the import is gone',
    );
    const inserted = await sql('select count(*)::int as created from import_plan where target is null');
    await sql(INSERT_SQL);
    return {
      created: Number(inserted[0].created),
      updated: updated.updated,
      unchanged: updated.unchanged,
      events: updated.events,
    };
  },
};
