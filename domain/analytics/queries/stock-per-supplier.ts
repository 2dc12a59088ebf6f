import type { EntityManager } from '@mikro-orm/postgresql';
import { numericToNumber } from '../../shared/money.js';
import type { SqlPart } from '../../shared/sql.js';

export interface SupplierStock {
  supplierId: string;
  supplierName: string;
  totalQuantity: number;
  totalValue: number;
}

/** Stock per supplier as SQL: current quantity and value per supplier, by total quantity desc (then name). */
export const stockPerSupplierQuery = (supplierId: string | null): SqlPart => ({
  sql: `select s.id, s.name, sum(i.quantity) as q, sum(i.quantity * i.price)::text as v
        from supplier s join inventory_item i on i.supplier_id = s.id
        where (?::uuid is null or s.id = ?::uuid)
        group by s.id, s.name
        order by q desc, s.name collate "C", s.id`,
  params: [supplierId, supplierId],
});

export const toSupplierStock = (r: any): SupplierStock => ({
  supplierId: r.id,
  supplierName: r.name,
  totalQuantity: Number(r.q),
  totalValue: numericToNumber(r.v),
});

/** Stock per supplier: current quantity and value per supplier, by total quantity desc (then name). */
export async function stockPerSupplier(
  em: EntityManager,
  supplierId: string | null = null,
): Promise<SupplierStock[]> {
  const q = stockPerSupplierQuery(supplierId);
  return (await em.execute<any[]>(q.sql, q.params)).map(toSupplierStock);
}
