import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlPart } from '../../shared/sql.js';

export interface LowStockItem {
  itemId: string;
  itemName: string;
  quantity: number;
  minimumQuantity: number;
  recommendedQuantity: number;
}

/** The low-stock items as SQL: items below their minimum, quantity asc (then name), optionally only the first `limit`. */
export const lowStockItemsQuery = (supplierId: string | null, limit: number | null = null): SqlPart => ({
  sql: `select id, name, quantity, minimum_quantity from inventory_item
        where quantity < minimum_quantity and (?::uuid is null or supplier_id = ?::uuid)
        order by quantity, name collate "C", id ${limit === null ? '' : 'limit ?'}`,
  params: limit === null ? [supplierId, supplierId] : [supplierId, supplierId, limit],
});

/** recommendedQuantity = max(2 x minimum - quantity, minimum - quantity): what to order to reach twice the minimum. */
export const toLowStockItem = (r: any): LowStockItem => ({
  itemId: r.id,
  itemName: r.name,
  quantity: r.quantity,
  minimumQuantity: r.minimum_quantity,
  recommendedQuantity: Math.max(2 * r.minimum_quantity - r.quantity, r.minimum_quantity - r.quantity),
});

/** The low-stock items: items below their minimum with the quantity to order. */
export async function lowStockItems(
  em: EntityManager,
  supplierId: string | null,
  limit: number | null = null,
): Promise<LowStockItem[]> {
  const q = lowStockItemsQuery(supplierId, limit);
  return (await em.execute<any[]>(q.sql, q.params)).map(toLowStockItem);
}
