import type { EntityManager } from '@mikro-orm/postgresql';

/** The low-stock count: items whose quantity is below their minimum (a partial index keeps this small). */
export async function lowStockCount(em: EntityManager): Promise<number> {
  const rows = await em.execute<{ n: string }[]>(
    'select count(*) as n from inventory_item where quantity < minimum_quantity',
  );
  return Number(rows[0].n);
}
