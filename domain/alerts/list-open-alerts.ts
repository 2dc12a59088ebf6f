import type { EntityManager } from '@mikro-orm/postgresql';

export interface LowStockAlertView {
  itemId: string;
  itemName: string;
  quantity: number;
  minimumQuantity: number;
  raisedAt: string;
}

/** Open low-stock alerts, oldest first, with the item's current quantity and minimum when it still exists. */
export async function listOpenAlerts(em: EntityManager): Promise<LowStockAlertView[]> {
  const rows = await em.execute<any[]>(
    `select a.item_id, coalesce(i.name, a.item_name) as item_name, coalesce(i.quantity, a.quantity) as quantity,
            coalesce(i.minimum_quantity, a.minimum_quantity) as minimum_quantity,
            to_char(a.raised_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as raised_at
     from low_stock_alert a left join inventory_item i on i.id = a.item_id
     where a.closed_at is null order by a.raised_at, a.id`,
  );
  return rows.map(r => ({
    itemId: r.item_id,
    itemName: r.item_name,
    quantity: Number(r.quantity),
    minimumQuantity: Number(r.minimum_quantity),
    raisedAt: r.raised_at,
  }));
}
