import { numericToNumber } from '../shared/money.js';
import { dbQuery, type Db } from '../shared/pool-query.js';
import { asOfInstant } from './item-as-of.js';

export interface InventoryValueView {
  asOf: string;
  totalValue: number;
  totalQuantity: number;
  items: number;
}

/**
 * Every item created up to the instant (the partial index of creations: one entry per item), each with its latest
 * change up to the instant (one index-only probe of the (item, at) index), so the cost follows the number of
 * items, not the length of the history. Items deleted by then, or of another supplier then, do not count.
 */
const VALUE_AS_OF_SQL = `
select coalesce(sum(s.quantity * s.price), 0)::text as total_value, coalesce(sum(s.quantity), 0)::text as total_quantity,
       count(*)::int as items
  from (select item_id from item_change
         where kind = 'created' and at < ?::timestamptz + interval '1 millisecond') ids
 cross join lateral (select c.kind, c.quantity, c.price, c.supplier_id from item_change c
                      where c.item_id = ids.item_id and c.at < ?::timestamptz + interval '1 millisecond'
                      order by c.at desc, c.id desc limit 1) s
 where s.kind <> 'deleted' and (?::uuid is null or s.supplier_id = ?::uuid)`;

/** GET /api/inventory/value?asOf=[&supplierId]: stock value and quantity, and how many items existed, then. */
export async function inventoryValueAsOf(
  db: Db,
  input: { asOf: string; supplierId?: string | null },
): Promise<InventoryValueView> {
  const at = asOfInstant(input.asOf);
  const supplierId = input.supplierId ?? null;
  const [row] = await dbQuery<{ total_value: string; total_quantity: string; items: number }>(
    db,
    VALUE_AS_OF_SQL,
    [at.toISOString(), at.toISOString(), supplierId, supplierId],
  );
  return {
    asOf: at.toISOString(),
    totalValue: numericToNumber(row.total_value),
    totalQuantity: Number(row.total_quantity),
    items: Number(row.items),
  };
}
