import type { EntityManager } from '@mikro-orm/postgresql';

export interface LowStockItem {
  itemId: string;
  itemName: string;
  quantity: number;
  minimumQuantity: number;
  recommendedQuantity: number;
}

/**
 * N5: items below their minimum, quantity asc (then name). recommendedQuantity = max(2 x minimum - quantity,
 * minimum - quantity): what to order to reach twice the minimum.
 */
export async function lowStockItems(
  em: EntityManager,
  supplierId: string | null,
  limit: number | null = null,
): Promise<LowStockItem[]> {
  const rows = await em.execute<any[]>(
    `select id, name, quantity, minimum_quantity from inventory_item
     where quantity < minimum_quantity and (?::uuid is null or supplier_id = ?::uuid)
     order by quantity, name collate "C", id ${limit === null ? '' : 'limit ?'}`,
    limit === null ? [supplierId, supplierId] : [supplierId, supplierId, limit],
  );
  return rows.map(r => ({
    itemId: r.id,
    itemName: r.name,
    quantity: r.quantity,
    minimumQuantity: r.minimum_quantity,
    recommendedQuantity: Math.max(2 * r.minimum_quantity - r.quantity, r.minimum_quantity - r.quantity),
  }));
}
