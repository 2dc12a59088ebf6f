import type { PoolClient } from 'pg';

/**
 * The purchasing part of the integrity check (`on_order_mismatch`), read in the check's snapshot: an item whose
 * `onOrderQuantity` differs from the open quantity of its lines on ORDERED/PARTIALLY_RECEIVED orders, and a
 * line whose `quantityReceived` differs from the sum of its receipts. Set-based: two aggregate reads.
 */
const ON_ORDER_DRIFT_SQL = `
select i.id as item_id, i.on_order_quantity || ' on order, open lines ' || coalesce(o.open, 0) as detail
  from inventory_item i
  left join (select l.item_id, sum(l.quantity_ordered - l.quantity_received) as open
               from purchase_order_line l join purchase_order p on p.id = l.purchase_order_id
              where p.status in ('ORDERED', 'PARTIALLY_RECEIVED') group by l.item_id) o on o.item_id = i.id
 where i.on_order_quantity <> coalesce(o.open, 0)
union all
select l.item_id, 'order ' || p.number || ' line received ' || l.quantity_received || ', receipts ' || coalesce(r.n, 0)
  from purchase_order_line l join purchase_order p on p.id = l.purchase_order_id
  left join (select r.purchase_order_id, rl.item_id, sum(rl.quantity) as n
               from purchase_receipt r join purchase_receipt_line rl on rl.receipt_id = r.id
              group by 1, 2) r on r.purchase_order_id = l.purchase_order_id and r.item_id = l.item_id
 where l.quantity_received <> coalesce(r.n, 0)`;

export async function onOrderDrift(
  client: PoolClient,
): Promise<{ itemId: string; kind: 'on_order_mismatch'; detail: string; entryIds: string[] }[]> {
  const { rows } = await client.query<{ item_id: string; detail: string }>(ON_ORDER_DRIFT_SQL);
  return rows.map(row => ({
    itemId: row.item_id,
    kind: 'on_order_mismatch',
    detail: row.detail,
    entryIds: [],
  }));
}
