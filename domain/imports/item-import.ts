import { stockChangedInsertSql, type StockChangeSql } from '../outbox/stock-changed-payload.js';
import { createSupplierBody } from '../suppliers/suppliers.schemas.js';
import {
  checkFields,
  countPlanSql,
  lockTargetsSql,
  markDuplicates,
  nulProblems,
  rejectionsSql,
  toCounts,
  type ImportKind,
  type StagedValues,
  updateTargets,
} from './import-kind.js';
import { itemChangeInsert } from '../inventory/item-change.js';
import { timeOrderedUuidSql } from './time-ordered-ids.js';
import { createItemBody } from '../inventory/inventory.schemas.js';

const COLUMNS = [
  'name',
  'sku',
  'quantity',
  'price',
  'supplierName',
  'minimumQuantity',
  'reorderPoint',
  'orderUpToQuantity',
] as const;

/** The API's create-item rules, with the supplier named instead of referenced by id. */
const rowSchema = createItemBody
  .fork(['supplierId'], field => field.optional())
  .keys({ supplierName: createSupplierBody.extract('name').optional() });

interface ItemImportRow {
  name: string;
  sku?: string | null;
  quantity: number;
  price: number;
  supplierName?: string;
  minimumQuantity: number;
  reorderPoint?: number | null;
  orderUpToQuantity?: number | null;
}

/** Text joi's trimmed `string().max(n)` keeps as it is (cells are never blank here). */
const isPlainText = (text: string | undefined, max: number) =>
  text === undefined || (text.length <= max && text.trim() === text && !text.includes('\u0000'));
const PLAIN_COUNT = /^\d{1,6}$/;
/** Below every price cap, with at most two decimals. */
const PLAIN_PRICE = /^\d{1,7}(?:\.\d{1,2})?$/;

/**
 * A row whose every cell is plainly valid (the common case), staged without joi: a subset of what the joi
 * schema accepts, converted as joi converts it. Anything else goes through the schema, for its messages.
 */
function plainRow(values: Record<string, string>): StagedValues | undefined {
  const { name, sku, quantity, price, supplierName, minimumQuantity, reorderPoint, orderUpToQuantity } =
    values;
  // Own levels go through the schema (their rule joins two cells).
  if (reorderPoint !== undefined || orderUpToQuantity !== undefined) return undefined;
  if (name === undefined || quantity === undefined || price === undefined) return undefined;
  if (!isPlainText(name, 255) || !isPlainText(sku, 64) || !isPlainText(supplierName, 255)) return undefined;
  if (!PLAIN_COUNT.test(quantity) || (minimumQuantity !== undefined && !PLAIN_COUNT.test(minimumQuantity)))
    return undefined;
  if (!PLAIN_PRICE.test(price) || Number(price) < 0.01) return undefined;
  return [
    name,
    sku ?? null,
    Number(quantity),
    price,
    supplierName ?? null,
    minimumQuantity === undefined ? null : Number(minimumQuantity),
    null,
    null,
  ];
}

/** Whether the row changes a field of its item `i` other than the quantity (columns left out keep theirs). */
const FIELDS_DIFFER = `(x.name <> i.name or coalesce(x.sku, i.sku) is distinct from i.sku or x.price <> i.price
  or (x.supplier_name is not null and x.supplier_id is distinct from i.supplier_id)
  or coalesce(x.minimum_quantity, i.minimum_quantity) <> i.minimum_quantity
  or coalesce(x.reorder_point, i.reorder_point) is distinct from i.reorder_point
  or coalesce(x.order_up_to_quantity, i.order_up_to_quantity) is distinct from i.order_up_to_quantity)`;

/**
 * Each row resolved as the row-by-row import did: its item by sku when it has one (and it matches), else by
 * name; its supplier by name; a new item its id, a version 7 UUID whose counter follows the order of the names
 * (see INSERT_SQL). Then the first problem of each row, in the API's order: a name, sku or item the
 * file named before, the supplier (unknown without createSuppliers; required for a new item), then a rename
 * onto another item's name.
 */
const PLAN_SQL = `
create temp table import_plan as
with resolved as (
  select r.*, coalesce(s.id, n.id) as target, s.id is not null as by_sku,
         (s.id is not null and n.id is not null and n.id <> s.id) as name_clash, sup.id as supplier_id
    from import_row r
    left join inventory_item s on r.sku is not null and lower(s.sku) = lower(r.sku)
    left join inventory_item n on lower(n.name) = lower(r.name)
    left join supplier sup on lower(sup.name) = lower(r.supplier_name)
), fresh as (
  select line, row_number() over (order by lower(name), line) as n from resolved where target is null
), clock as (
  select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
)
select resolved.*, ${timeOrderedUuidSql('clock.ms', 'fresh.n')} as new_id
  from resolved left join fresh using (line) cross join clock`;

const UNKNOWN_SUPPLIER = 'x.supplier_name is not null and x.supplier_id is null and not $1::boolean';
const NO_SUPPLIER = 'x.supplier_name is null and x.target is null';

const REJECT_SQL = rejectionsSql(
  `(${UNKNOWN_SUPPLIER}) or (${NO_SUPPLIER}) or x.name_clash`,
  `(4, 'supplierName', 'error.not.found.supplier', null, not d.dup and not d.same_target and ${UNKNOWN_SUPPLIER}),
   (5, 'supplierName', 'inventory.item.supplier.required', null, not d.dup and not d.same_target and ${NO_SUPPLIER}),
   (6, 'name', 'error.duplicate.resource', null, not d.dup and not d.same_target
       and not (${UNKNOWN_SUPPLIER}) and not (${NO_SUPPLIER}) and x.name_clash)`,
);

const COUNT_SQL = countPlanSql('inventory_item', 'i', `(${FIELDS_DIFFER} or x.quantity <> i.quantity)`);

/** A stock change of an imported row `c` of item data (its supplier `s`), by the import's user ($1) and correlation id ($2). */
const importChange = (change: string, before: string, after: string, reason: string): StockChangeSql => ({
  change,
  quantityBefore: before,
  quantityAfter: after,
  reason,
  createdBy: '$1::text',
  correlationId: '$2::text',
  at: 'c.changed_at',
});

/** Suppliers the file names and the database lacks (createSuppliers): created once each, first spelling. */
const CREATE_SUPPLIERS_SQL = `
with created as (
  insert into supplier (name, created_by)
  select distinct on (lower(supplier_name)) supplier_name, $1 from import_plan
   where supplier_name is not null and supplier_id is null
   order by lower(supplier_name), line
  returning id, name
)
update import_plan x set supplier_id = c.id from created c
 where x.supplier_id is null and lower(x.supplier_name) = lower(c.name)`;

const LOCK_SQL = lockTargetsSql('inventory_item');

/**
 * Known items: the fields and the counted quantity in one update (version + 1 for the fields, + 1 for the
 * count, as the PUT and adjust use cases would), then a PRICE_CHANGE event when the price changed and an
 * INVENTORY_COUNT event for the quantity, both built from the updated row as the use cases build them.
 */
const UPDATE_SQL = `
with old as (
  select x.target as id, i.quantity as q0, i.price as p0
    from import_plan x join inventory_item i on i.id = x.target
), changed as (
  update inventory_item i
     set name = x.name, sku = coalesce(x.sku, i.sku), price = x.price,
         supplier_id = coalesce(x.supplier_id, i.supplier_id),
         minimum_quantity = coalesce(x.minimum_quantity, i.minimum_quantity), quantity = x.quantity,
         reorder_point = coalesce(x.reorder_point, i.reorder_point),
         order_up_to_quantity = coalesce(x.order_up_to_quantity, i.order_up_to_quantity),
         version = i.version + (${FIELDS_DIFFER})::int + (x.quantity <> i.quantity)::int,
         updated_at = clock_timestamp()
    from import_plan x
   where x.target = i.id and (${FIELDS_DIFFER} or x.quantity <> i.quantity)
  returning i.id, i.name, i.sku, i.quantity, i.price, i.supplier_id, i.minimum_quantity, i.reorder_point,
            i.order_up_to_quantity, i.version, i.updated_at as changed_at
), ic as (${itemChangeInsert('changed', 'updated', 'changed.changed_at')}
), ${stockChangedInsertSql(
  'e',
  'c',
  's.name',
  importChange('k.change', 'o.q0', 'o.q0 + k.change', 'k.reason'),
  `from changed c join old o on o.id = c.id join supplier s on s.id = c.supplier_id
   cross join lateral (values (1, 'PRICE_CHANGE', 0), (2, 'INVENTORY_COUNT', c.quantity - o.q0)) k(n, reason, change)
   where (k.n = 1 and c.price <> o.p0) or (k.n = 2 and k.change <> 0)
   order by c.id, k.n`,
)}
select (select count(*) from changed)::int as updated, (select count(*) from e)::int as events`;

/**
 * New items and an INITIAL_STOCK event for each with stock. Their ids were made with the plan (outside the
 * transaction), time-ordered and in the order of their names (timeOrderedUuidSql), and they are inserted in id
 * order: the primary key and the change records' index by item then append at their right-hand ends, and the
 * name index fills its pages one after the other, instead of each touching a page at random per row.
 */
const INSERT_SQL = `
with c as (
  insert into inventory_item (id, name, sku, quantity, price, minimum_quantity, supplier_id, created_by,
                              reorder_point, order_up_to_quantity, created_at, updated_at)
  select new_id, name, sku, quantity, price, coalesce(minimum_quantity, 0), supplier_id, $1,
         reorder_point, order_up_to_quantity, t.at, t.at
    from import_plan, (select clock_timestamp() as at) t where target is null order by new_id
  returning id, name, sku, quantity, price, supplier_id, minimum_quantity, reorder_point, order_up_to_quantity,
            version, updated_at as changed_at
), ic as (${itemChangeInsert('c', 'created', 'c.changed_at', true)}
), ${stockChangedInsertSql(
  'e',
  'c',
  's.name',
  importChange('c.quantity', '0', 'c.quantity', "'INITIAL_STOCK'"),
  'from c join supplier s on s.id = c.supplier_id where c.quantity > 0',
)}
select (select count(*) from c)::int as created, (select count(*) from e)::int as events`;

/**
 * Items: a new row is created (INITIAL_STOCK for its stock); a known item gets its fields (a price change
 * writes PRICE_CHANGE) and its counted quantity as an INVENTORY_COUNT change. Columns the file leaves out keep
 * their stored values.
 */
export const ITEM_IMPORT: ImportKind = {
  columns: COLUMNS,
  requiredColumns: ['name', 'quantity', 'price'],
  stagedColumns: [
    ['name', 'text'],
    ['sku', 'text'],
    ['quantity', 'integer'],
    ['price', 'numeric(12, 2)'],
    ['supplier_name', 'text'],
    ['minimum_quantity', 'integer'],
    ['reorder_point', 'integer'],
    ['order_up_to_quantity', 'integer'],
  ],
  stage(values, isKey) {
    const plain = plainRow(values);
    if (plain) return plain;
    const nul = nulProblems(values);
    if (nul.length > 0) return nul;
    const checked = checkFields<ItemImportRow>(rowSchema, values, isKey);
    if (Array.isArray(checked)) return checked;
    const row = checked.value;
    if (
      row.reorderPoint != null &&
      row.orderUpToQuantity != null &&
      row.orderUpToQuantity <= row.reorderPoint
    )
      return [{ column: 'orderUpToQuantity', messageKey: 'inventory.item.order.up.to.above' }];
    return [
      row.name,
      row.sku ? row.sku : null,
      row.quantity,
      String(row.price),
      row.supplierName ?? null,
      values.minimumQuantity === undefined ? null : row.minimumQuantity,
      row.reorderPoint ?? null,
      row.orderUpToQuantity ?? null,
    ];
  },
  async validate(sql, options) {
    await sql(PLAN_SQL);
    // Statistics for the plan's joins with the (possibly much larger) table: an index lookup per row for a
    // small file, a hash join for a large one.
    await sql('analyze import_plan');
    await markDuplicates(sql);
    await sql(REJECT_SQL, [options.createSuppliers]);
    await sql('delete from import_plan where line in (select line from import_rejection)');
    return toCounts((await sql(COUNT_SQL))[0]);
  },
  async apply(sql, options) {
    const { user, correlationId } = options.write;
    await sql(CREATE_SUPPLIERS_SQL, [user]);
    const updated = await updateTargets(
      sql,
      LOCK_SQL,
      UPDATE_SQL,
      [user, correlationId],
      'an item of the import is gone',
    );
    const [created] = await sql<{ created: number; events: number }>(INSERT_SQL, [user, correlationId]);
    return {
      created: created.created,
      updated: updated.updated,
      unchanged: updated.unchanged,
      events: created.events + updated.events,
    };
  },
};
