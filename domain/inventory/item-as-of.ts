import { ValidationError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';
import { numericToNumber } from '../shared/money.js';
import { dbQuery, type Db } from '../shared/pool-query.js';
import { parseDateParam } from '../analytics/date-params.js';
import { itemNotFound } from './item-errors.js';

export interface ItemAsOfView {
  id: string;
  name: string;
  sku: string | null;
  quantity: number;
  price: number;
  totalValue: number;
  supplierId: string;
  supplierName: string | null;
  minimumQuantity: number;
  reorderPoint: number | null;
  orderUpToQuantity: number | null;
  version: number;
  asOf: string;
}

/**
 * The instant of an `asOf` parameter (already checked against the supported dates); one in the future is a 400.
 * Times are kept to the millisecond, as the API writes them: a change belongs to the instant it is shown at.
 */
export function asOfInstant(asOf: string, now = Date.now()): Date {
  const at = parseDateParam(asOf).at;
  if (at.getTime() > now) throw new ValidationError('inventory.asof.future');
  return at;
}

/**
 * The item's latest change up to the instant (one probe of the (item, at) index, whatever the history's length):
 * changes shown at that very millisecond count.
 */
const ITEM_AS_OF_SQL = `
select c.kind, c.name, c.sku, c.quantity, c.price::text as price, (c.quantity * c.price)::text as total_value,
       c.supplier_id, s.name as supplier_name, c.minimum_quantity, c.reorder_point, c.order_up_to_quantity, c.version
  from (select * from item_change c where c.item_id = ? and c.at < ?::timestamptz + interval '1 millisecond'
         order by c.at desc, c.id desc limit 1) c
  left join supplier s on s.id = c.supplier_id`;

/** GET /api/inventory/{id}?asOf=: the item as it was then (404 when it did not exist then, or was deleted). */
export async function itemAsOf(db: Db, id: string, asOf: string): Promise<ItemAsOfView> {
  const at = asOfInstant(asOf);
  if (!isUuid(id)) throw itemNotFound();
  const [row] = await dbQuery<{
    kind: string;
    name: string;
    sku: string | null;
    quantity: number;
    price: string;
    total_value: string;
    supplier_id: string;
    supplier_name: string | null;
    minimum_quantity: number;
    reorder_point: number | null;
    order_up_to_quantity: number | null;
    version: number;
  }>(db, ITEM_AS_OF_SQL, [id, at.toISOString()]);
  if (!row || row.kind === 'deleted') throw itemNotFound();
  return {
    id,
    name: row.name,
    sku: row.sku,
    quantity: Number(row.quantity),
    price: numericToNumber(row.price),
    totalValue: numericToNumber(row.total_value),
    supplierId: row.supplier_id,
    supplierName: row.supplier_name,
    minimumQuantity: Number(row.minimum_quantity),
    reorderPoint: row.reorder_point,
    orderUpToQuantity: row.order_up_to_quantity,
    version: Number(row.version),
    asOf: at.toISOString(),
  };
}
