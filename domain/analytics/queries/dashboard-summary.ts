import type { EntityManager } from '@mikro-orm/postgresql';
import {
  itemUpdateFrequencyQuery,
  toItemUpdateCount,
  type ItemUpdateCount,
} from './item-update-frequency.js';
import { lowStockItemsQuery, toLowStockItem, type LowStockItem } from './low-stock-items.js';
import {
  monthlyStockMovementQuery,
  toMonthlyMovement,
  type MonthlyMovement,
} from './monthly-stock-movement.js';
import { stockPerSupplierQuery, toSupplierStock, type SupplierStock } from './stock-per-supplier.js';
import type { SqlPart } from '../../shared/sql.js';

export interface DashboardSummary {
  stockPerSupplier: SupplierStock[];
  lowStockItems: LowStockItem[];
  monthlyStockMovement: MonthlyMovement[];
  topUpdatedItems: ItemUpdateCount[];
}

/**
 * The analytics summary: the dashboard in one statement (one round trip): each part is the query of its own endpoint, aggregated
 * to a JSON array in its order. Every part reads current state or size-bounded rollups only.
 */
export async function dashboardSummary(
  em: EntityManager,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<DashboardSummary> {
  const parts: SqlPart[] = [
    stockPerSupplierQuery(supplierId),
    lowStockItemsQuery(supplierId, 5),
    monthlyStockMovementQuery(range, supplierId),
    itemUpdateFrequencyQuery({ supplierId, ...range, limit: 5 }),
  ];
  const [row] = await em.execute<{ parts: any[][] }[]>(
    `select json_build_array(${parts
      .map(p => `(select coalesce(json_agg(part_row), '[]'::json) from (${p.sql}) part_row)`)
      .join(', ')}) as parts`,
    parts.flatMap(p => p.params),
  );
  const [suppliers, low, movement, top] = row.parts;
  return {
    stockPerSupplier: suppliers.map(toSupplierStock),
    lowStockItems: low.map(toLowStockItem),
    monthlyStockMovement: movement.map(toMonthlyMovement),
    topUpdatedItems: top.map(toItemUpdateCount),
  };
}
