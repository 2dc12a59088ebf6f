import { ValidationError } from '../shared/errors.js';
import { isUuid } from '../shared/sql.js';
import { dbQuery, type Db } from '../shared/pool-query.js';
import { parseDateParam } from '../analytics/date-params.js';
import { itemNotFound } from './item-errors.js';
import { toItemView, type ItemRow, type ItemView, type PresentOnly } from './item.view.js';

/** The item as it was at an instant: the item view without what only the present has, and the instant. */
export type ItemAsOfView = Omit<ItemView<string | null>, PresentOnly> & { asOf: string };

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
       c.supplier_id, s.name as supplier_name, c.minimum_quantity, c.reorder_point, c.order_up_to_quantity, c.version,
       -- the item view's present-only columns (PresentOnly), left out of the answer
       null as on_order_quantity, null as created_by, null as created_at, null as updated_at
  from (select * from item_change c where c.item_id = ? and c.at < ?::timestamptz + interval '1 millisecond'
         order by c.at desc, c.id desc limit 1) c
  left join supplier s on s.id = c.supplier_id`;

/** GET /api/inventory/{id}?asOf=: the item as it was then (404 when it did not exist then, or was deleted). */
export async function itemAsOf(db: Db, id: string, asOf: string): Promise<ItemAsOfView> {
  const at = asOfInstant(asOf);
  if (!isUuid(id)) throw itemNotFound();
  const [row] = await dbQuery<Omit<ItemRow<string | null>, 'id'> & { kind: string }>(db, ITEM_AS_OF_SQL, [
    id,
    at.toISOString(),
  ]);
  if (!row || row.kind === 'deleted') throw itemNotFound();
  const {
    onOrderQuantity: _onOrder,
    createdBy: _by,
    createdAt: _at,
    updatedAt: _updated,
    ...then
  } = toItemView({ ...row, id });
  return { ...then, asOf: at.toISOString() };
}
